"""Benchmark: scan the torch wheel's ~10k headers, serially and with a pool of 2.

Usage: python3 bench/bench_scan.py [DIR]   (default: torch/include of the installed wheel)
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "python"))

from torchsplit.scan.scanner import scan_paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, help="headers to scan")
    directory = parser.parse_args(argv).dir
    if directory is not None:
        root = directory
    else:
        try:
            import torch
        except ImportError:
            print("torch is not installed (pip install torch==2.13.0); pass a directory")
            return 0
        root = Path(torch.__file__).parent / "include"
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    for jobs in (1, 2):
        t0 = time.perf_counter()
        findings, scanned = scan_paths([str(root)], base=str(root), jobs=jobs)
        elapsed = time.perf_counter() - t0
        print(
            f"jobs={jobs}: {scanned} files ({size / 1e6:.0f} MB) in {elapsed:.2f} s "
            f"({scanned / elapsed:.0f} files/s), {len(findings)} findings"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
