"""Benchmark: a 5-op element-wise chain, eager vs fused, on cpu and emu:0.

    out = (a * b + c).relu() * d - e        (float32)

Eager runs 5 kernels and allocates 4 temporaries; fused runs one loop. Each
figure is the median of --repeat runs after one warm-up call (which traces
and compiles; the compile time is printed separately). emu figures include
synchronizing the stream. Run after a build:

    python3 bench/bench_jit.py [--sizes 1e6 1e7] [--repeat 7] [--devices cpu emu:0]

Eager figures depend on how core was built: Bazel's default (fastbuild)
compiles core without optimisation; build with `-c opt` for a fair
comparison. Prints figures; asserts nothing. Uses a temporary kernel cache unless
TORCH_CORE_JIT_CACHE is set.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for root in ("core", "third_device/torch_emu"):
    for base in (REPO, REPO / "bazel-bin"):
        sys.path.insert(0, str(base / root))

import numpy as np  # noqa: E402

import torch_core as tc  # noqa: E402
import torch_emu  # noqa: E402, F401  (registers emu and its fuser)
from torch_core import jit  # noqa: E402


def chain(a, b, c, d, e):
    return (a * b + c).relu() * d - e


def _median_seconds(fn: Callable[[], object], device: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        tc.synchronize(device)
        times.append(time.perf_counter() - t0)
        del out
    return statistics.median(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--devices", nargs="+", default=["cpu", "emu:0"])
    args = parser.parse_args(argv)
    if os.environ.get(jit.CACHE_ENV):
        return _run(args)
    with tempfile.TemporaryDirectory(prefix="bench-jit-") as cache:
        os.environ[jit.CACHE_ENV] = cache
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    fused = jit.fuse(chain)

    print(f"{'device':<7} {'elements':>10} {'eager ms':>10} {'fused ms':>10} {'speedup':>8}")
    for device in args.devices:
        for size in args.sizes:
            n = int(size)
            rng = np.random.default_rng(0)
            xs = [
                tc.tensor(rng.standard_normal(n).astype(np.float32), device=device)
                for _ in range(5)
            ]
            t0 = time.perf_counter()
            first = fused(*xs)
            tc.synchronize(device)
            setup = time.perf_counter() - t0
            same = first.numpy().tobytes() == chain(*xs).numpy().tobytes()
            eager_s = _median_seconds(lambda xs=xs: chain(*xs), device, args.repeat)
            fused_s = _median_seconds(lambda xs=xs: fused(*xs), device, args.repeat)
            print(
                f"{device:<7} {n:>10.0e} {eager_s * 1e3:>10.2f} {fused_s * 1e3:>10.2f} "
                f"{eager_s / fused_s:>7.2f}x   (first call {setup * 1e3:.0f} ms, "
                f"{'bit-identical' if same else 'DIFFERS'})"
            )
    stats = jit.stats()
    print(f"jit: {stats['compilations']} compilation(s), {stats['memory_hits']} in-process hit(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
