"""recq.Generator against the golden ids of tests/models/decoder.

golden.txt holds tiny_decoder.onnx's prompt and greedy ids (written by
make_tiny_decoder.py with torch); <stem>.decode.prompt.i64 / .decode.ids.i64
hold the prompt and greedy ids of a GPT-2 export, matched by onnxruntime.
Greedy ids are compared exactly, as tests/decode/generator_test.cc does.
"""

import pathlib

import numpy as np
import pytest

import recq

DECODER = pathlib.Path(__file__).resolve().parents[2] / "tests" / "models" / "decoder"
MAX_LENGTH = 64


def golden():
    lines = dict(line.split(" ", 1) for line in (DECODER / "golden.txt").read_text().splitlines()
                 if line and not line.startswith("#"))
    prompt = [int(x) for x in lines["prompt"].split()]
    greedy = [int(x) for x in lines["greedy"].split()]
    return prompt, greedy


@pytest.fixture(scope="module")
def generator(context):
    return recq.Generator.load(str(DECODER / "tiny_decoder.onnx"), max_length=MAX_LENGTH,
                               device=context, tuning="off")


def test_greedy_ids_match_golden_and_stream(generator):
    prompt, greedy = golden()
    chunks = []
    r = generator.generate(np.array(prompt, dtype=np.int64), max_new_tokens=len(greedy), chunk=5,
                           on_chunk=chunks.append)
    assert r.ids == greedy
    assert [i for c in chunks for i in c] == greedy
    assert len(chunks) == r.chunks >= 2
    assert r.stop == "max_new_tokens" and r.prompt_tokens == len(prompt)
    assert r.prefill_ms > 0 and r.decode_ms > 0
    assert r.prefill_tokens_per_s > 0 and r.decode_tokens_per_s > 0
    assert len(r.token_ms) == len(greedy) - 1 and all(t > 0 for t in r.token_ms)
    assert generator.max_length == MAX_LENGTH and generator.vocab == 256
    assert generator.kv_cache_bytes > 0 and generator.sampling == "greedy"


def test_eos_reset_and_repeat(generator):
    prompt, greedy = golden()
    eos = greedy[2]
    first = greedy.index(eos)
    r = generator.generate(prompt, max_new_tokens=len(greedy), eos_id=eos)
    assert r.ids == greedy[:first + 1] and r.stop == "eos"
    generator.reset()
    assert generator.generate(prompt, max_new_tokens=len(greedy)).ids == greedy


def test_gpt2_export_matches_onnxruntime_ids(context):
    stem = DECODER / "gpt2_past_tiny"
    prompt = np.fromfile(f"{stem}.decode.prompt.i64", dtype=np.int64)
    want = np.fromfile(f"{stem}.decode.ids.i64", dtype=np.int64).tolist()
    gen = recq.Generator.load(f"{stem}.onnx", max_length=32, device=context, tuning="off")
    assert gen.generate(prompt, max_new_tokens=len(want)).ids == want


def test_seeded_top_k_repeats(context):
    prompt, _ = golden()
    gen = recq.Generator.load(str(DECODER / "tiny_decoder.onnx"), max_length=MAX_LENGTH,
                              device=context, tuning="off",
                              sampling="top_k=40,temperature=0.7,seed=1")
    assert gen.sampling.startswith("top_k")
    a = gen.generate(prompt, max_new_tokens=12).ids
    b = gen.generate(prompt, max_new_tokens=12).ids
    assert a == b and len(a) == 12 and all(0 <= i < gen.vocab for i in a)


def test_errors_raise_and_keep_the_generator(generator):
    prompt, greedy = golden()
    with pytest.raises(ValueError):
        generator.generate([])
    with pytest.raises(ValueError, match="256"):
        generator.generate([1, 256])
    with pytest.raises(ValueError):
        generator.generate(prompt, max_new_tokens=0)
    with pytest.raises(ValueError, match="on_chunk"):
        generator.generate(prompt, on_chunk=3)

    def boom(ids):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        generator.generate(prompt, max_new_tokens=4, on_chunk=boom)
    with pytest.raises(ValueError):
        recq.Generator.load(str(DECODER / "tiny_decoder.onnx"), max_length=MAX_LENGTH,
                            sampling="top_q=3")
    assert generator.generate(prompt, max_new_tokens=len(greedy)).ids == greedy
