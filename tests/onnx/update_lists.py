#!/usr/bin/env python3
"""Writes expected_pass.txt and excluded.txt from a run of every ONNX node case.

    RECQ_ONNX_ALL=1 build/tests/onnx/onnx_conformance_test \
        --gtest_filter=OnnxAllCases.Summary > summary.txt
    python3 tests/onnx/update_lists.py summary.txt [more summaries...]

Every case lands in one list: PASS lines in expected_pass.txt, the others in
excluded.txt with a category in front of the importer's (or the run's) own
message, so that the list says why rather than "not implemented":

  training-only, sequence/optional, string, unsupported element type (one
  recq does not have: bfloat16, string...), type without a kernel (float64
  or an integer into an op whose kernels take float32 only),
  data-dependent shape, empty tensor, unsupported: <op> (an op type recq does
  not import), unsupported variant (an attribute or input form of an op recq
  imports), fails (imports but computes a different result or fails to run).
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

TRAINING_OPS = ("Adagrad", "Adam", "Momentum", "Gradient")
TRAINING_CASES = ("test_training_", "test_adam", "test_adagrad", "test_momentum",
                  "test_nesterov_momentum", "test_gradient_")


def category(name, message):
    m = message
    if "is not a tensor (sequence, map or optional)" in m or re.search(
            r"Sequence|Optional", m):
        return "sequence/optional types"
    if "string" in m and "element type" in m:
        return "string tensors"
    if "depends on the values of its inputs" in m or ("(Range)" in m and "depends on" in m):
        return "data-dependent output shape"
    if "training_mode" in m or name.startswith(TRAINING_CASES) or any(
            f"({op})" in m for op in TRAINING_OPS):
        return "training only"
    if "empty" in m or "zero dimension" in m or "dimension 0 is 0" in m:
        return "empty tensors"
    op = re.search(r"op type '([^']+)' is not supported", m)
    if op:
        return f"unsupported: {op.group(1)}"
    if re.search(r"op type '[^']+' is supported at opsets", m):
        return "unsupported opset"
    if "element type" in m or "has element type" in m:
        return "unsupported element type"
    if "takes float32 only" in m:
        return "type without a kernel"
    return "unsupported variant"


def main(paths):
    results = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            parts = line.split(" ", 2)
            if len(parts) < 2 or parts[0] not in ("PASS", "FAIL", "SKIP"):
                continue
            results[parts[1]] = (parts[0], parts[2] if len(parts) > 2 else "")
    passing = sorted(n for n, (tag, _) in results.items() if tag == "PASS")
    (HERE / "expected_pass.txt").write_text("".join(f"{n}\n" for n in passing))
    lines = []
    counts = {}
    for name in sorted(results):
        tag, message = results[name]
        if tag == "PASS":
            continue
        cat = "fails" if tag == "FAIL" else category(name, message)
        key = cat.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
        message = re.sub(r"\S*/model\.onnx: ", "", message.replace("\n", " "))
        if len(message) > 300:
            message = message[:297] + "..."
        lines.append(f"{name}: {cat}: {message}\n")
    header = [
        "# Every ONNX node case that is not in expected_pass.txt, with why:\n",
        "# written by update_lists.py from a run of OnnxAllCases.Summary\n",
        "# (RECQ_ONNX_ALL=1). A category comes first, then the importer's or\n",
        "# the run's own message.\n",
        f"# {len(passing)} pass, {len(lines)} excluded: " +
        ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "\n",
    ]
    (HERE / "excluded.txt").write_text("".join(header + lines))
    print(f"{len(passing)} pass, {len(lines)} excluded")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main(sys.argv[1:])
