"""Benchmark: `torchsplit audit` wall time on this checkout, cold and warm.

Usage: python3 bench/bench_audit.py [RUNS]   (default 5 warm runs)
Cold = right after `bazel shutdown` of this workspace's own server (server start,
loading, analysis for cquery); warm = the server already up, as after a build.
Times the whole CLI (`tools/torchsplit audit --json`) as CI runs it. Target: warm < 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 2.0


def audit() -> tuple[float, dict[str, object]]:
    env = {**os.environ, "TORCHSPLIT_PYTHON": os.environ.get("TORCHSPLIT_PYTHON", sys.executable)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(REPO / "tools" / "torchsplit"), "audit", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed, json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=5, help="warm runs (default 5)")
    runs = parser.parse_args(argv).runs
    subprocess.run([str(REPO / "tools" / "bazel"), "shutdown"], cwd=REPO, check=True)
    cold, report = audit()
    print(
        f"cold (after bazel shutdown): {cold:.2f} s; {len(report['pairs'])} forbidden pairs, "
        f"{report['bazel_calls']} Bazel calls, {report['artifacts_read']} artifacts read, "
        f"ok={report['ok']}"
    )
    warm = [audit()[0] for _ in range(runs)]
    verdict = "within" if max(warm) < TARGET_SECONDS else "OVER"
    print(
        f"warm ({runs} runs): median {statistics.median(warm):.2f} s, min {min(warm):.2f} s, "
        f"max {max(warm):.2f} s ({verdict} the {TARGET_SECONDS:.0f} s target)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
