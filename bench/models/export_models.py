#!/usr/bin/env python3
"""Exports the model set (torchvision architectures, random weights) to ONNX.

Usage: python3 bench/models/export_models.py [--models a,b] [--out DIR]
           [--batch N] [--dynamic-batch] [--dynamic-seq]
           [--exporter torchscript|dynamo|both]
           [--force] [--list]

The set: torchvision's architectures (below), and the families of
bench/models/families.py: text and audio models from `transformers` configs
(bert, gpt2, t5_encoder, whisper_encoder, wav2vec2, segformer), timm families
(timm_NAME), a YOLO detector (yolov8n, raw head without NMS) and a U-Net
(unet_resnet18), and the decoders with past key/values (gpt2_past,
gpt2_past_tiny). --models takes names, 'quick', 'all' (torchvision's),
'families', 'decoders' or 'everything' (torchvision's and the families).

Both PyTorch exporters: --exporter torchscript (dynamo=False, opset 17, stem
NAME) and dynamo (torch.export, dynamo=True, opset 21, stem NAME_dynamo).
--exporter defaults to torchscript for torchvision's models and to both for
the families.

The one export script that the model-set benchmarks share (bench/
compare_onnxruntime.py here, bench/gpu/measure.sh on the GPU machine). For
every model it writes into --out (default BUILD/models):

  NAME.onnx       PyTorch's TorchScript-based exporter (dynamo=False), opset 17,
                  eval mode, weights=None after torch.manual_seed(SEED), batch 1
                  (--batch), 224x224 (299 for inception_v3); input "input",
                  output "output" (segmentation models: their "out" head);
                  BatchNorm statistics calibrated on seeded random images
                  (see calibrate_batchnorm; --no-bn-calibration: stem NAME_raw);
                  a Linear layer initialised to zeros (ViT's head) gets seeded
                  random weights, so that the output depends on the input
  NAME.input.f32  a fixed random input (numpy seed SEED, uniform [-1, 1)), raw
                  little-endian float32, the format of `recq run --input`
  NAME.ort.f32    onnxruntime's (CPU) output for that input, raw float32
  NAME.json       manifest: shapes, versions, seeds, sizes and SHA-256 of the
                  files, the ONNX op histogram, onnxruntime vs PyTorch eager
                  relative L2 error, how much the output moves with the input;
                  written last, so a model whose manifest is there is complete
  models.json     every manifest in --out

With --batch N the stem is NAME_bN; with --dynamic-batch the batch dimension
is symbolic (stem NAME_dyn, the sample input still has --batch rows; for the
families, the sequence too). With --dynamic-seq the text models (bert, gpt2,
t5_encoder) get a symbolic "sequence" dimension only, on every input and
output (stem NAME_seq; batch 2 and length 64 in the sample input), for
`recq bench --shapes=input_ids:2x1..512/pow2,...` (docs/shapes.md); other
models are skipped.
The families have named, typed inputs (int64 ids and masks for text models):
  STEM.onnx, STEM.in.INPUT.bin (raw little-endian elements of the input's
  type, the format of `recq run --input=INPUT=FILE`), STEM.ort.OUTPUT.bin
  (onnxruntime's output, raw, its own type) and STEM.json, whose "inputs" and
  "outputs" list name, shape, dtype and file of each. Text models run at
  batch 2 with a different attention mask per row (the second padded).
The decoders with past (gpt2_past: GPT-2-small, 12 layers, 768 wide, 12
heads, 50257 tokens; gpt2_past_tiny: 2 layers, 64 wide, 4 heads, 256 tokens)
take int64 input_ids [batch, sequence], attention_mask [batch, past +
sequence], position_ids [batch, sequence] and past_key_values.{i}.key/value
[batch, heads, past, head_dim]; they give logits [batch, sequence, vocab] and
present.{i}.key/value [batch, heads, past + sequence, head_dim]. Batch,
sequence and past are always symbolic; the sample step is batch 2, 3 new
tokens after 5 cached (random) ones. bench/models/decode_reference.py writes
their generation references, bench/models/export_optimum.py the optimum-onnx
layout.

Existing complete exports with the same settings are skipped unless --force.
Deterministic: the same torch / torchvision versions give the same bytes.

Re-runs itself inside BUILD/.venv-models when that exists; without one it
runs in this Python if it has torch, torchvision, onnx and onnxruntime (the
GPU machine), else bench/models/setup_venv.sh makes the venv first
(--no-venv: always this Python). BUILD is $RECQ_BUILD_DIR or build/.
Other scripts import it: export(), make_model(), stem(), parse_models().
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 20261123
OPSET = 17
DYNAMO_OPSET = 21  # the newest opset recq imports
VENV_DIR = ".venv-models"

# name -> input height/width. Order: classification first, then
# transformers, segmentation, the small mobile nets.
MODELS = {
    "resnet18": 224, "resnet50": 224, "resnext50_32x4d": 224, "vgg11": 224, "alexnet": 224,
    "densenet121": 224, "googlenet": 224, "inception_v3": 299, "squeezenet1_1": 224,
    "mobilenet_v2": 224, "mobilenet_v3_small": 224, "mobilenet_v3_large": 224,
    "efficientnet_b0": 224, "efficientnet_v2_s": 224, "regnet_y_400mf": 224,
    "vit_b_16": 224, "swin_t": 224, "convnext_tiny": 224,
    "deeplabv3_mobilenet_v3_large": 224, "lraspp_mobilenet_v3_large": 224, "fcn_resnet50": 224,
    "shufflenet_v2_x1_0": 224, "mnasnet1_0": 224,
}
SEGMENTATION = {"deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "fcn_resnet50"}
# A small, quick subset (seconds to export, fast on PoCL) for --models quick.
QUICK = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
         "shufflenet_v2_x1_0"]


def build_dir():
    return os.environ.get("RECQ_BUILD_DIR") or os.path.join(REPO, "build")


def family_of(name):
    """The family of a model of bench/models/families.py ("text", "audio"...)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import families
    return families.family(name)


def family_names():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import families
    return families.names()


def family_with_past():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import families
    return families.WITH_PAST


def parse_models(spec):
    """'all' (torchvision's), 'quick', 'families', 'decoders',
    'everything' (torchvision's and the families) or a comma-separated list
    of names."""
    if spec in (None, "", "all"):
        return list(MODELS)
    names = []
    fam = family_names()
    decoders = list(family_with_past())
    for part in spec.split(","):
        part = part.strip()
        if part == "quick":
            names += QUICK
        elif part == "decoders":
            names += decoders
        elif part in decoders:
            names.append(part)
        elif part == "all":
            names += list(MODELS)
        elif part == "families":
            names += fam
        elif part == "everything":
            names += list(MODELS) + fam
        elif part in MODELS or part in fam:
            names.append(part)
        elif part:
            sys.exit(f"unknown model '{part}'; the set: "
                     f"{', '.join(list(MODELS) + fam + decoders)}")
    return list(dict.fromkeys(names))


def stem(name, batch=1, dynamic=False, bn_calibration=True, exporter="torchscript",
         dynamic_seq=False):
    s = name + ("_dyn" if dynamic else "_seq" if dynamic_seq else "" if batch == 1
                else f"_b{batch}")
    s = s if bn_calibration else s + "_raw"
    return s + "_dynamo" if exporter == "dynamo" else s


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="all",
                   help="comma-separated names, 'quick' or 'all' (default); --list shows them")
    p.add_argument("--out", help="output folder (default: BUILD/models)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--dynamic-batch", action="store_true",
                   help="symbolic batch dimension (the sample input has --batch rows)")
    p.add_argument("--dynamic-seq", action="store_true",
                   help="text models only: a symbolic sequence dimension (stem NAME_seq)")
    p.add_argument("--exporter", choices=["torchscript", "dynamo", "both"],
                   help="PyTorch exporter (default: torchscript for torchvision's models, both "
                        "for the families)")
    p.add_argument("--force", action="store_true", help="re-export even when the files exist")
    p.add_argument("--no-bn-calibration", action="store_true",
                   help="keep BatchNorm's initial statistics (see calibrate_batchnorm; stem gets _raw)")
    p.add_argument("--no-venv", action="store_true",
                   help="use this Python as it is (fails when torch etc. are missing)")
    p.add_argument("--list", action="store_true", help="print the model set and exit")
    return p.parse_args(argv)


def have_modules():
    try:
        import numpy, onnx, onnxruntime, torch, torchvision  # noqa: F401
        return True
    except Exception:  # ImportError, or a torch that cannot load its libraries
        return False


def ensure_env(args):
    """Re-executes inside BUILD/.venv-models when it exists (its pinned
    versions win over whatever the system Python has); without one, this
    Python is used when it has everything (the GPU machine), else the venv is
    made first."""
    venv = os.path.join(build_dir(), VENV_DIR)
    python = os.path.join(venv, "bin", "python3")
    if args.no_venv or os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(python):
        if have_modules():
            return
        subprocess.run(["bash", os.path.join(REPO, "bench", "models", "setup_venv.sh")], check=True)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def file_entry(path):
    """A manifest's "files" entry for PATH: name, size and SHA-256."""
    return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": sha256(path)}


def write_array(path, value):
    """Writes the numpy array VALUE to PATH, raw and little-endian, atomically."""
    write_atomic(path, lambda p: value.astype(value.dtype.newbyteorder("<")).tofile(p))


def rel_l2(actual, expected):
    """||actual - expected|| / ||expected|| over the flattened elements;
    infinite when the element counts differ."""
    import numpy as np
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape:
        return float("inf")
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def calibrate_batchnorm(model, resolution, batch=4, channels=3):
    """Sets every BatchNorm's running statistics from one train-mode pass over
    BATCH seeded uniform [-1, 1) images (a cumulative average: momentum None).
    Freshly initialized BN layers are identities in eval mode (mean 0, var 1),
    so activations of a random-weight net drift through the depth: MobileNet
    V2's logits come out near 1e-9, Inception-v3's near 1e11, and GoogLeNet's
    trunk vanishes so its logits are just the classifier's bias (onnxruntime
    and PyTorch then agree to 1e-12 whatever the convolutions compute). With
    calibrated statistics every BN normalizes, like a trained net, the output
    depends on the input and an output check tests the whole graph; folding BN
    into the convolutions is exercised with non-trivial values too."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return False
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    gen = torch.Generator().manual_seed(SEED + 1)
    x = torch.rand(batch, channels, resolution, resolution, generator=gen) * 2 - 1
    model.train()
    with torch.no_grad():
        model(x)
    model.eval()
    return True


def make_model(name, bn_calibration=True):
    """torchvision's NAME with weights=None (no download: backbones too), eval,
    seeded, returning one tensor."""
    import torch
    import torchvision

    torch.manual_seed(SEED)
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        # The inference graph (the auxiliary heads only run in training) and
        # torchvision's own initialization, stated so no warning asks.
        kwargs.update(aux_logits=False, init_weights=True)
    if name in SEGMENTATION:
        # weights_backbone defaults to ImageNet weights (a download): none.
        kwargs["weights_backbone"] = None
        if name != "lraspp_mobilenet_v3_large":
            kwargs["aux_loss"] = False
        model = getattr(torchvision.models.segmentation, name)(**kwargs)

        class OutHead(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]

        model = OutHead(model)
    else:
        model = getattr(torchvision.models, name)(**kwargs)
    # A layer initialised to zeros (ViT's classification head) would make the
    # output the same for every input, and comparing it vacuous: seeded
    # random weights instead, so the compared output checks the network.
    gen = torch.Generator().manual_seed(SEED + 2)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.02)
    if bn_calibration:
        calibrate_batchnorm(model, MODELS[name])
    return model.eval()


def sample_input(name, batch):
    import numpy as np
    r = MODELS[name]
    rng = np.random.default_rng(SEED)
    return rng.uniform(-1.0, 1.0, size=(batch, 3, r, r)).astype(np.float32)


def ort_session(path, threads=2):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def op_histogram(model_proto):
    counts = {}
    for node in model_proto.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def write_atomic(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def complete(out, st, settings):
    """True when STEM's files are all there and were made with SETTINGS."""
    manifest = os.path.join(out, st + ".json")
    if not os.path.exists(manifest):
        return False
    try:
        with open(manifest) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return False
    if any(m.get(k) != v for k, v in settings.items()):
        return False
    for info in m.get("files", {}).values():
        p = os.path.join(out, info["file"])
        if not os.path.exists(p) or os.path.getsize(p) != info["bytes"]:
            return False
    return True


def torch_export(model, args, path, input_names, output_names, dynamic_axes, exporter,
                 varargs_shapes=False):
    """Writes MODEL's ONNX export to PATH with EXPORTER ('torchscript': the
    TorchScript-based exporter at OPSET; 'dynamo': torch.export at
    DYNAMO_OPSET, weights inside the file). VARARGS_SHAPES: MODEL's forward
    takes *args, and the dynamo exporter gets DYNAMIC_AXES as torch.export
    dynamic_shapes (every named axis Dim.DYNAMIC), its symbols then renamed
    to the axis names (torch.export cannot take dynamic_axes whose sizes are
    related, as a decoder's past + sequence = total)."""
    import torch
    if exporter == "torchscript":
        torch.onnx.export(model, args, path, dynamo=False, opset_version=OPSET,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    elif varargs_shapes and dynamic_axes:
        dyn = torch.export.Dim.DYNAMIC
        shapes = (tuple({axis: dyn for axis in dynamic_axes.get(n, {})} for n in input_names),)
        torch.onnx.export(model, args, path, dynamo=True, opset_version=DYNAMO_OPSET,
                          input_names=input_names, output_names=output_names,
                          dynamic_shapes=shapes, external_data=False, optimize=True,
                          verbose=False)
        name_symbolic_dims(path, {n: a for n, a in dynamic_axes.items() if n in input_names})
    else:
        torch.onnx.export(model, args, path, dynamo=True, opset_version=DYNAMO_OPSET,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, external_data=False, optimize=True,
                          verbose=False)


def name_symbolic_dims(path, input_axes):
    """Renames the symbols that the graph inputs of the ONNX file PATH carry
    on the axes of INPUT_AXES ({input: {axis: name}}) to those names,
    everywhere in the graph (torch.export calls them s0, s1, ...). A symbol
    inside an expression ("s1 + s2") is renamed as a whole word."""
    import re
    import onnx
    proto = onnx.load(path)
    rename = {}
    for vi in proto.graph.input:
        dims = vi.type.tensor_type.shape.dim
        for axis, name in input_axes.get(vi.name, {}).items():
            if axis < len(dims) and dims[axis].dim_param:
                rename.setdefault(dims[axis].dim_param, name)
    if not rename:
        return
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, rename)) + r")\b")
    for vi in list(proto.graph.input) + list(proto.graph.output) + list(proto.graph.value_info):
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param:
                d.dim_param = pattern.sub(lambda m: rename[m.group(1)], d.dim_param)
    onnx.save(proto, path)


def export_one(name, out, batch, dynamic, bn_calibration, exporter="torchscript"):
    import numpy as np
    import onnx
    import onnxruntime
    import torch
    import torchvision

    st = stem(name, batch, dynamic, bn_calibration, exporter)
    start = time.perf_counter()
    model = make_model(name, bn_calibration)
    x = sample_input(name, batch)
    onnx_path = os.path.join(out, st + ".onnx")
    dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Exported from a fixed example (not x): the graph must not depend on
        # the sample input's values.
        example = torch.zeros(x.shape)
        write_atomic(onnx_path, lambda p: torch_export(
            model, (example,), p, ["input"], ["output"], dynamic_axes, exporter))
        expected_torch = model(torch.from_numpy(x)).numpy()
    export_s = time.perf_counter() - start
    proto = onnx.load(onnx_path, load_external_data=False)
    onnx.checker.check_model(onnx_path)
    sess = ort_session(onnx_path)
    y = sess.run(None, {"input": x})[0].astype(np.float32)
    # How much the output moves with the input: near 0 means the output is
    # (nearly) a constant and agreeing with it proves little.
    x2 = np.random.default_rng(SEED + 2).uniform(-1.0, 1.0, size=x.shape).astype(np.float32)
    sensitivity = rel_l2(sess.run(None, {"input": x2})[0], y)
    in_path = os.path.join(out, st + ".input.f32")
    ort_path = os.path.join(out, st + ".ort.f32")
    write_atomic(in_path, lambda p: x.astype("<f4").tofile(p))
    write_atomic(ort_path, lambda p: y.astype("<f4").tofile(p))
    manifest = {
        "model": name, "stem": st, "opset": OPSET if exporter == "torchscript" else DYNAMO_OPSET,
        "seed": SEED, "batch": batch,
        "dynamic_batch": dynamic, "bn_calibration": bn_calibration,
        "exporter": f"torch.onnx.export(dynamo={exporter == 'dynamo'})",
        "input_name": "input", "input_shape": list(x.shape),
        "output_name": "output", "output_shape": list(y.shape),
        "params": int(sum(p.numel() for p in model.parameters())),
        "onnx_nodes": len(proto.graph.node), "onnx_ops": op_histogram(proto),
        "ort_vs_torch_rel_l2": rel_l2(y, expected_torch),
        "output_std": float(y.std()), "output_abs_max": float(np.abs(y).max()),
        "input_sensitivity": sensitivity,
        "export_s": round(export_s, 2),
        "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__,
                     "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                     "numpy": np.__version__},
        "files": {},
    }
    for key, path in (("onnx", onnx_path), ("input", in_path), ("ort_output", ort_path)):
        manifest["files"][key] = file_entry(path)
    write_atomic(os.path.join(out, st + ".json"),
                 lambda p: open(p, "w").write(json.dumps(manifest, indent=1) + "\n"))
    return manifest


def export_family(name, out, exporter, dynamic, dynamic_seq=False):
    """Exports one model of bench/models/families.py with named, typed
    inputs and outputs; returns its manifest."""
    import numpy as np
    import onnx
    import onnxruntime
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import families

    st = stem(name, 1, dynamic, True, exporter, dynamic_seq)
    start = time.perf_counter()
    spec = families.make(name, SEED)
    with_past = name in families.WITH_PAST
    dynamic = dynamic or with_past
    axes = spec.dynamic_axes if dynamic else None
    if dynamic_seq and not with_past:
        axes = sequence_axes(spec)
        if axes is None:
            raise ValueError(f"{name} has no sequence dimension (--dynamic-seq: text models)")
    res = families.image_resolution(spec)
    if res is not None:
        calibrate_batchnorm(spec.model, res)
        spec.model.eval()
    onnx_path = os.path.join(out, st + ".onnx")
    args = tuple(torch.from_numpy(v) for v in spec.inputs.values())
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # PyTorch's output first: tracing may leave traced tensors in a
        # module's caches (YOLO's anchors under torch.export).
        expected = spec.model(*args)
        expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
        expected = [e.detach().clone() for e in expected]
        write_atomic(onnx_path, lambda p: torch_export(
            spec.model, args, p, list(spec.inputs), spec.outputs,
            axes, exporter, varargs_shapes=with_past))
    export_s = time.perf_counter() - start
    proto = onnx.load(onnx_path, load_external_data=False)
    onnx.checker.check_model(onnx_path)
    sess = ort_session(onnx_path)
    feeds = dict(spec.inputs)
    got = sess.run(None, feeds)
    outputs = [o.name for o in sess.get_outputs()]
    manifest = {
        "model": name, "stem": st, "family": families.family(name),
        "opset": OPSET if exporter == "torchscript" else DYNAMO_OPSET, "seed": SEED,
        "batch": len(next(iter(spec.inputs.values()))), "dynamic_batch": with_past,
        "dynamic_sequence": dynamic or dynamic_seq,
        "bn_calibration": res is not None,
        "exporter": f"torch.onnx.export(dynamo={exporter == 'dynamo'})",
        "inputs": [], "outputs": [],
        "params": int(sum(p.numel() for p in spec.model.parameters())),
        "onnx_nodes": len(proto.graph.node), "onnx_ops": op_histogram(proto),
        "export_s": round(export_s, 2),
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__,
                     "onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
        "files": {},
    }
    if with_past:
        cfg = spec.model.lm.config
        manifest["decoder"] = {
            "layers": cfg.n_layer, "heads": cfg.n_head, "head_dim": cfg.n_embd // cfg.n_head,
            "hidden": cfg.n_embd, "vocab": cfg.vocab_size, "max_positions": cfg.n_positions,
            "past_inputs": families.past_names(cfg.n_layer)[0],
            "present_outputs": families.past_names(cfg.n_layer)[1],
            "attn_implementation": cfg._attn_implementation,
            "sample_step": {"batch": families.PAST_BATCH, "sequence": families.PAST_SEQUENCE,
                            "past": families.PAST_LENGTH}}
        manifest["versions"]["transformers"] = __import__("transformers").__version__
    manifest["files"]["onnx"] = file_entry(onnx_path)
    for key, value in spec.inputs.items():
        path = os.path.join(out, f"{st}.in.{key}.bin")
        write_array(path, value)
        manifest["inputs"].append({"name": key, "shape": list(value.shape),
                                   "dtype": str(value.dtype), "file": os.path.basename(path)})
        manifest["files"]["in." + key] = file_entry(path)
    worst = 0.0
    for i, (oname, value) in enumerate(zip(outputs, got)):
        path = os.path.join(out, f"{st}.ort.{oname}.bin")
        write_array(path, value)
        err = rel_l2(value, expected[i].numpy()) if i < len(expected) else None
        worst = max(worst, err or 0.0)
        entry = {"name": oname, "shape": list(value.shape), "dtype": str(value.dtype),
                 "file": os.path.basename(path), "ort_vs_torch_rel_l2": err,
                 "output_std": float(np.std(value))}
        manifest["files"]["ort." + oname] = file_entry(path)
        # PyTorch's own output (fp32, on the CPU), for checks against PyTorch
        # rather than onnxruntime.
        torch_value = expected[i].numpy() if i < len(expected) else None
        if torch_value is not None and torch_value.shape == value.shape:
            tpath = os.path.join(out, f"{st}.torch.{oname}.bin")
            write_array(tpath, torch_value.astype(value.dtype))
            entry["torch_file"] = os.path.basename(tpath)
            manifest["files"]["torch." + oname] = file_entry(tpath)
        manifest["outputs"].append(entry)
    manifest["ort_vs_torch_rel_l2"] = worst
    write_atomic(os.path.join(out, st + ".json"),
                 lambda p: open(p, "w").write(json.dumps(manifest, indent=1) + "\n"))
    return manifest


def sequence_axes(spec):
    """The "sequence" axes of SPEC's dynamic axes alone, or None if it has none."""
    axes = {n: {k: v for k, v in a.items() if v == "sequence"}
            for n, a in (spec.dynamic_axes or {}).items()}
    axes = {n: a for n, a in axes.items() if a}
    return axes or None


def write_index(out):
    manifests = []
    for f in sorted(os.listdir(out)):
        if f.endswith(".json") and f != "models.json":
            try:
                with open(os.path.join(out, f)) as fh:
                    m = json.load(fh)
            except (OSError, ValueError):
                continue
            if "stem" in m:
                manifests.append(m)
    order = {n: i for i, n in enumerate(MODELS)}
    manifests.sort(key=lambda m: (order.get(m["model"], 999), m["model"], m["stem"]))
    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(manifests, f, indent=1)
        f.write("\n")


def export(names, out, batch=1, dynamic=False, force=False, bn_calibration=True, log=print,
           exporter=None, dynamic_seq=False):
    """Exports NAMES into OUT (skipping complete ones unless FORCE); returns
    {name: manifest or {'error': ...}}. Usable from other scripts."""
    import torch
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    # nn.MultiheadAttention's inference fast path (eval mode under no_grad)
    # traces to aten::_native_multi_head_attention, which the TorchScript
    # exporter cannot export (ViT-B/16): the plain path is the same math.
    # Restored afterwards (PyTorch's own timings keep their fast path).
    mha = getattr(torch.backends, "mha", None)
    fastpath = mha.get_fastpath_enabled() if mha else None
    if mha:
        mha.set_fastpath_enabled(False)
    try:
        return _export(names, out, batch, dynamic, force, bn_calibration, log, exporter,
                       dynamic_seq)
    finally:
        if mha:
            mha.set_fastpath_enabled(fastpath)


def _export(names, out, batch, dynamic, force, bn_calibration, log, exporter, dynamic_seq=False):
    os.makedirs(out, exist_ok=True)
    results = {}
    for name in names:
        is_family = name not in MODELS
        if dynamic_seq and (not is_family or family_of(name) != "text"):
            log(f"{name}: skipped (--dynamic-seq: text models only)")
            continue
        chosen = exporter or ("both" if is_family else "torchscript")
        for ex in (["torchscript", "dynamo"] if chosen == "both" else [chosen]):
            st = stem(name, 1 if is_family else batch, dynamic, bn_calibration or is_family, ex,
                      dynamic_seq)
            opset = OPSET if ex == "torchscript" else DYNAMO_OPSET
            # Keyed by name where one export per name (what callers index).
            key = name if not is_family and chosen != "both" else st
            settings = ({"opset": opset, "seed": SEED,
                         "dynamic_sequence": dynamic or dynamic_seq or name in family_with_past()}
                        if is_family
                        else {"opset": opset, "seed": SEED, "batch": batch,
                              "dynamic_batch": dynamic, "bn_calibration": bn_calibration})
            if not force and complete(out, st, settings):
                with open(os.path.join(out, st + ".json")) as f:
                    results[key] = json.load(f)
                log(f"{st}: up to date")
                continue
            try:
                m = (export_family(name, out, ex, dynamic, dynamic_seq) if is_family
                     else export_one(name, out, batch, dynamic, bn_calibration, ex))
            except Exception as e:  # one model's failure must not stop the set
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                results[key] = {"model": name, "stem": st, "error": f"{type(e).__name__}: {first}"}
                log(f"{st}: FAILED: {results[key]['error']}")
                continue
            results[key] = m
            mib = m["files"]["onnx"]["bytes"] / 2**20
            if is_family:
                shown = [i for i in m["inputs"] if not i["name"].startswith("past_key_values.")]
                ins = ", ".join(f"{i['name']} {i['dtype']} {i['shape']}" for i in shown)
                if len(shown) < len(m["inputs"]):
                    past = next(i for i in m["inputs"] if i["name"].startswith("past_key_values."))
                    ins += (f", {len(m['inputs']) - len(shown)} past_key_values.* "
                            f"{past['dtype']} {past['shape']}")
                log(f"{st}: {mib:.1f} MiB, {m['onnx_nodes']} nodes, in {ins}, ort vs torch rel "
                    f"L2 {m['ort_vs_torch_rel_l2']:.1e}, {m['export_s']:.1f} s")
            else:
                log(f"{st}: {mib:.1f} MiB, {m['onnx_nodes']} nodes, in {m['input_shape']} -> "
                    f"out {m['output_shape']}, ort vs torch rel L2 "
                    f"{m['ort_vs_torch_rel_l2']:.1e}, input sensitivity "
                    f"{m['input_sensitivity']:.2f}, {m['export_s']:.1f} s")
    write_index(out)
    return results


def main():
    args = parse_args()
    if args.list:
        for name, r in MODELS.items():
            print(f"{name:<30} {r}x{r}{'  (quick)' if name in QUICK else ''}")
        for name in family_names():
            print(f"{name:<30} (families.py)")
        for name in family_with_past():
            print(f"{name:<30} (families.py, decoder with past)")
        return 0
    names = parse_models(args.models)
    if args.batch < 1:
        sys.exit("--batch must be at least 1")
    ensure_env(args)
    out = args.out or os.path.join(build_dir(), "models")
    results = export(names, out, args.batch, args.dynamic_batch, args.force,
                     not args.no_bn_calibration, log=lambda s: print(s, flush=True),
                     exporter=args.exporter, dynamic_seq=args.dynamic_seq)
    failed = [n for n, m in results.items() if "error" in m]
    print(f"{len(results) - len(failed)} of {len(results)} models in {out}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
