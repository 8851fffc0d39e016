"""Benchmark: evaluate + classify a ~1,600-line PyTorch-style build_variables.bzl.

Usage: python3 bench/bench_reorg.py [FILE.bzl ...]   (default: a generated 1,600-line file)
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "python"))

from torchsplit.reorg.classify import classify
from torchsplit.reorg.rules import load_rules
from torchsplit.reorg.starlark_eval import evaluate

DIRS = [
    ("core_sources_full", "torch/csrc/jit/passes/pass_{}.cpp"),
    ("aten_native_source_non_codegen_list", "aten/src/ATen/native/Op{}.cpp"),
    ("libtorch_distributed_base_sources", "torch/csrc/distributed/c10d/Thing{}.cpp"),
    ("libtorch_cuda_core_sources", "torch/csrc/cuda/Runtime{}.cpp"),
    ("aten_cuda_cu_source_list", "aten/src/ATen/native/cuda/Kernel{}.cpp"),
    ("libtorch_cuda_distributed_extra_sources", "torch/csrc/distributed/c10d/symm_mem/M{}.cu"),
    ("libtorch_python_cuda_core_sources", "torch/csrc/cuda/py/Binding{}.cpp"),
    ("libtorch_python_core_sources", "torch/csrc/python/Py{}.cpp"),
]


def generate(lines_wanted: int = 1680) -> str:
    per_list = (lines_wanted - 80) // len(DIRS)
    out = ["# generated PyTorch-style build_variables.bzl for benchmarking\n"]
    for name, pattern in DIRS:
        out.append(f"\n{name} = [\n")
        out.extend(f'    "{pattern.format(i)}",\n' for i in range(per_list - 3))
        out.append("]\n")
    out.append(
        "\nlibtorch_core_sources = sorted(\n"
        "    core_sources_full + aten_native_source_non_codegen_list,\n)\n"
        "libtorch_cuda_sources = libtorch_cuda_core_sources + "
        'libtorch_cuda_distributed_extra_sources + ["torch/csrc/cuda/nccl.cpp"]\n'
        "headers = ['{}.h'.format(n.split('/')[-1].split('.')[0]) for n in core_sources_full]\n"
        'def libtorch_sources(gencode_pattern = ":generate-code[{}]"):\n'
        "    flag = native.read_config('fbcode', 'x', None)\n"
        "    r = [gencode_pattern.format(n) for n in ['a.cpp', 'b.cpp']]\n"
        "    r.extend(libtorch_core_sources)\n"
        "    r.extend(libtorch_distributed_base_sources)\n"
        "    return r\n"
    )
    return "".join(out)


def bench(path: Path, runs: int = 7) -> None:
    rules = load_rules()
    eval_times, class_times = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        ev = evaluate(path)
        t1 = time.perf_counter()
        result = classify(ev, rules)
        t2 = time.perf_counter()
        eval_times.append(t1 - t0)
        class_times.append(t2 - t1)
    n_lines = len(path.read_text().splitlines())
    total = [a + b for a, b in zip(eval_times, class_times, strict=True)]
    print(
        f"{path.name}: {n_lines} lines, {len(ev.lists)} lists, {len(result.decisions)} sources; "
        f"median of {runs}: evaluate {statistics.median(eval_times) * 1000:.1f} ms, "
        f"classify {statistics.median(class_times) * 1000:.1f} ms, "
        f"total {statistics.median(total) * 1000:.1f} ms (max {max(total) * 1000:.1f} ms)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="build_variables.bzl files")
    files = parser.parse_args(argv).files
    if files:
        for path in files:
            bench(path)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "build_variables.bzl"
        path.write_text(generate())
        bench(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
