"""Benchmark: scan the torch wheel's headers (include/) plus its Python package (torch/).

Usage: python3 bench/bench_scan.py [DIR ...]   (default: the installed wheel's include/
and torch/ package). Prints wall and CPU time (this process plus its workers: on a
shared, loaded machine the CPU time is the steadier figure) for 1 and 2 jobs, and the
--plan buckets. Asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "python"))

from torchsplit.scan.plan import build_plan
from torchsplit.scan.scanner import scan_tree


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "dirs", nargs="*", type=Path, help="trees to scan (default: the torch wheel)"
    )
    dirs = parser.parse_args(argv).dirs
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
    print(f"roots: {', '.join(map(str, roots))}; load average {os.getloadavg()[0]:.1f}")
    result = None
    for jobs in (1, 2):
        t0, c0 = time.perf_counter(), _cpu()
        result = scan_tree([str(r) for r in roots], base=str(base), jobs=jobs)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        print(
            f"jobs={jobs}: {result.scanned} files in {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"({result.scanned / wall:.0f} files/s), {len(result.findings)} findings"
        )
    assert result is not None
    plan = build_plan(result.files, "all", None, result.paths)
    print(
        f"plan: {len(plan.edits)} edits ({sum(len(f) for f in plan.edits.values())} "
        f"couplings), {len(plan.moves)} moves, "
        f"{sum(len(p) for p in plan.generated.values())} generated from "
        f"{len(plan.generated)} templates, {len(plan.mentions)} mentions only"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
