"""Benchmark: the whole ``torchsplit scan --plan`` CLI against ``grep -rlE`` and a
10-line Python regex baseline, on the torch wheel and on a real PyTorch source tree.

Usage: python3 bench/bench_scan.py [--tree DIR] [--repeat N] [--jobs N]

Corpora: the installed torch wheel's package (``include/`` and the Python package, every
suffix the scanner reads) and, when present, a real PyTorch source tree's ``c10/``,
``aten/src/ATen/`` and ``torch/`` (``.cpp .cu .cuh .h .py``; default
``~/.cache/torchsplit/upstream/2.6.0``, as ``tools/torchsplit upstream
fetch`` unpacks it). Each command runs ``--repeat`` times in a row, interleaved with the
others; the table gives the median wall time and the median CPU time (user + system of
the command and every process it started), and the CPU time as a multiple of the
baseline's. On a machine shared with other jobs the CPU time is the figure to compare.
Asserts nothing.

The baseline (BASELINE below) is what one would write in ten lines: walk the tree, read
each file, lower-case each line and search it for vendor words (an alternation of plain
words, which ``re`` scans fast). The same ten lines with ``re.IGNORECASE`` instead of
``lower()`` are shown for reference only: ``re`` is several times slower that way.
``grep -rlE`` only lists the files holding one of the words.

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

from torchsplit.scan.scanner import DEFAULT_SUFFIXES

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


WORDS = (
    "cuda|cudnn|nccl|nvrtc|nvml|cublas|cufft|curand|cusparse|cusolver|thrust|cub|hip|rocm|"
    "miopen|rocblas|rccl"
)
# The 10-line baseline; SUFFIXES is filled in per corpus.
BASELINE = """import os, re, sys
WORDS = re.compile(r"{words}")
hits = files = 0
for root in sys.argv[1:]:
    for d, _, names in os.walk(root):
        for name in names:
            if name.endswith({suffixes}):
                with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                    n = sum(1 for ln in f if WORDS.search(ln.lower())); hits += n; files += n > 0
print(f"{{hits}} matching lines in {{files}} files")
"""
DEFAULT_TREE = Path.home() / ".cache" / "torchsplit" / "upstream" / "2.6.0"
TREE_ROOTS = ("c10", "aten/src/ATen", "torch")
TREE_SUFFIXES = (".cpp", ".cu", ".cuh", ".h", ".py")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float, str]:
    """(wall, CPU of the process and all it waited for, last line of its output)."""
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    footer = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return wall, cpu, footer if "torchsplit scan:" in footer else (lines[-1] if lines else "")


def bench_corpus(
    name: str,
    roots: list[Path],
    base: Path,
    suffixes: tuple[str, ...],
    repeat: int,
    jobs: int,
    tmp: Path,
) -> None:
    baseline = tmp / f"baseline_{name}.py"
    baseline.write_text(BASELINE.format(words=WORDS, suffixes=repr(suffixes)))
    assert len(baseline.read_text().splitlines()) == 10
    # The same ten lines with a case-insensitive pattern instead of lower(): the other
    # way one writes it, for reference (not the yardstick).
    nocase = tmp / f"baseline_nocase_{name}.py"
    nocase.write_text(
        baseline.read_text()
        .replace(f'r"{WORDS}")', f'r"{WORDS}", re.I)')
        .replace("WORDS.search(ln.lower())", "WORDS.search(ln)")
    )
    cli = [str(REPO / "tools" / "torchsplit"), "scan", "--plan", *map(str, roots)]
    cli += ["--base", str(base), "-j", str(jobs), "-o", os.devnull]
    if suffixes != DEFAULT_SUFFIXES:
        cli += ["--suffixes", ",".join(suffixes)]
    grep = ["grep", "-rlE", "-i", *(f"--include=*{s}" for s in suffixes), WORDS]
    grep += [str(r) for r in roots]
    serial = [*cli[: cli.index("-j")], "-j", "1", *cli[cli.index("-j") + 2 :]]
    commands = {
        f"torchsplit scan --plan -j {jobs}": cli,
        "torchsplit scan --plan -j 1": serial,
        "grep -rlE": grep,
        "10-line Python baseline": [sys.executable, str(baseline), *map(str, roots)],
        "  same, re.IGNORECASE": [sys.executable, str(nocase), *map(str, roots)],
    }
    runs: dict[str, list[tuple[float, float, str]]] = {k: [] for k in commands}
    for _ in range(repeat):
        for label, argv in commands.items():
            runs[label].append(_run(argv))
    base_cpu = statistics.median(c for _, c, _ in runs["10-line Python baseline"])
    print(f"\n{name}: {', '.join(map(str, roots))}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'command':<28} {'wall s':>7} {'CPU s':>7} {'CPU vs baseline':>16}")
    for label, results in runs.items():
        wall = statistics.median(w for w, _, _ in results)
        cpu = statistics.median(c for _, c, _ in results)
        print(f"{label:<28} {wall:>7.2f} {cpu:>7.2f} {cpu / base_cpu:>15.2f}x")
    for label, results in runs.items():
        print(f"  {label}: {results[-1][2]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=DEFAULT_TREE, help="a PyTorch source tree")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (median)")
    parser.add_argument(
        "--jobs", type=int, default=2, help="the CLI's -j (default 2; -j 1 runs too)"
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="peak RSS of the CLI on generated 50 MB files (dense, no findings, one line)",
    )
    parser.add_argument(
        "--max-per-file", help="--memory: pass this --max-per-file to the CLI (default: its own)"
    )
    parsed = parser.parse_args(argv)
    if parsed.memory:
        extra = [] if parsed.max_per_file is None else ["--max-per-file", parsed.max_per_file]
        return bench_memory(extra)
    with tempfile.TemporaryDirectory(prefix="bench_scan_") as tmp:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            print("the torch wheel is not installed (pip install torch==2.13.0): skipped")
        else:
            package = Path(next(iter(spec.submodule_search_locations)))
            bench_corpus(
                "torch wheel",
                [package],
                package.parent,
                DEFAULT_SUFFIXES,
                parsed.repeat,
                parsed.jobs,
                Path(tmp),
            )
        tree = parsed.tree
        if not (tree / "c10").is_dir():
            print(f"\n{tree}: no PyTorch source tree (tools/torchsplit upstream fetch): skipped")
        else:
            bench_corpus(
                "PyTorch source tree",
                [tree / r for r in TREE_ROOTS],
                tree,
                TREE_SUFFIXES,
                parsed.repeat,
                parsed.jobs,
                Path(tmp),
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
