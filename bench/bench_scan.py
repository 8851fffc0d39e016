"""Benchmark: scan the torch wheel's headers (include/) plus its Python package (torch/).

Usage: python3 bench/bench_scan.py [DIR ...]   (default: the installed wheel's include/
and torch/ package). Prints wall and CPU time (this process plus its workers: on a
shared, loaded machine the CPU time is the steadier figure) for 1 and 2 jobs, and the
--plan buckets. Asserts nothing.

``--cli N`` instead runs the whole CLI N times on the same trees, ``tools/torchsplit
scan INCLUDE TORCH --base INCLUDE -j 2 -o /dev/null``, and prints the median, the
range and the largest peak RSS of the runs (the figure docs/scan.md gives).

``--memory`` instead generates 50 MB files (one dense with findings, one without any,
one single 50 MB line) and prints the peak RSS and wall time of ``tools/torchsplit
scan FILE -o /dev/null`` on each, each run in its own child process.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "python"))

from torchsplit.scan.plan import build_plan
from torchsplit.scan.scanner import scan_tree


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


REPO = Path(__file__).resolve().parents[1]
MEMORY_SIZE = 50_000_000
MEMORY_CASES = {
    # two findings a line: the case --max-per-file keeps bounded
    "dense.cpp": b"  if (x.is_cuda()) { cudaMalloc(&p, n); }\n",
    "none.cpp": b"int f(int a) { return a + 1; }\n",
    "oneline.cpp": b"int x = 1; ",  # no newline at all
}
# Runs the command and prints the peak RSS (KiB on Linux) of that one child: a fresh
# parent per case, since RUSAGE_CHILDREN keeps the largest child it has ever waited for.
_PEAK = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def bench_memory(extra: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="bench_scan_") as tmp:
        for name, unit in MEMORY_CASES.items():
            path = Path(tmp) / name
            path.write_bytes(unit * (MEMORY_SIZE // len(unit)))
            cmd = [str(REPO / "tools" / "torchsplit"), "scan", str(path), "-o", os.devnull]
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", _PEAK, *cmd, *extra],
                capture_output=True,
                text=True,
                check=True,
            )
            wall = time.perf_counter() - t0
            peak, code = out.stdout.split()
            footer = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
            print(f"{name}: maxrss {int(peak) / 1024:.0f} MB, {wall:.1f} s wall, exit {code}")
            print(f"  {footer}")
            path.unlink()
    return 0


def bench_cli(roots: list[Path], base: Path, runs: int) -> int:
    cmd = [str(REPO / "tools" / "torchsplit"), "scan", *map(str, roots), "--base", str(base)]
    cmd += ["-j", "2", "-o", os.devnull]
    print(f"{' '.join(cmd)}  (x{runs}; load average {os.getloadavg()[0]:.1f})")
    walls, peaks = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, *cmd], capture_output=True, text=True, check=True
        )
        walls.append(time.perf_counter() - t0)
        peaks.append(int(out.stdout.split()[0]))
    print(
        f"CLI: {statistics.median(walls):.2f} s median wall ({min(walls):.2f}-{max(walls):.2f}), "
        f"{max(peaks) / 1024:.0f} MiB peak RSS"
    )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "dirs", nargs="*", type=Path, help="trees to scan (default: the torch wheel)"
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="peak RSS of the CLI on generated 50 MB files (dense, no findings, one line)",
    )
    parser.add_argument(
        "--max-per-file", help="--memory: pass this --max-per-file to the CLI (default: its own)"
    )
    parser.add_argument(
        "--cli", type=int, metavar="N", help="time the whole CLI (-j 2) N times instead"
    )
    parsed = parser.parse_args(argv)
    if parsed.memory:
        extra = [] if parsed.max_per_file is None else ["--max-per-file", parsed.max_per_file]
        return bench_memory(extra)
    dirs = parsed.dirs
    if dirs:
        roots = list(dirs)
        base = roots[0]
    else:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            print("torch is not installed (pip install torch==2.13.0); pass directories")
            return 0
        package = Path(next(iter(spec.submodule_search_locations)))
        roots = [package / "include", package]
        base = package / "include"
    if parsed.cli:
        return bench_cli(roots, base, parsed.cli)
    print(f"roots: {', '.join(map(str, roots))}; load average {os.getloadavg()[0]:.1f}")
    result = None
    for jobs in (1, 2):
        t0, c0 = time.perf_counter(), _cpu()
        result = scan_tree([str(r) for r in roots], base=str(base), jobs=jobs)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        print(
            f"jobs={jobs}: {result.scanned} files in {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"({result.scanned / wall:.0f} files/s), {result.total} findings"
        )
    assert result is not None
    plan = build_plan(result.files, "all", None, result.paths)
    print(
        f"plan: {len(plan.edits)} edits ({sum(e.count for e in plan.edits.values())} "
        f"couplings), {len(plan.moves)} moves, "
        f"{sum(len(p) for p in plan.generated.values())} generated from "
        f"{len(plan.generated)} templates, {len(plan.mentions)} mentions only"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
