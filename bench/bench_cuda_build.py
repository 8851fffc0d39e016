"""Benchmark: wall time of a clean build of //third_device/torch_cuda:all.

Builds in a fresh output base of its own (no previous outputs, no disk or
remote cache), after starting the Bazel server (not part of the figure), so
the figure is the cold compile: core's C++ plus torch_cuda's C++ and its .cu
files, each compiled by nvcc for every configured architecture
(--@rules_cuda//cuda:archs, default sm_80;sm_90;sm_100;sm_120;compute_120).

    python3 bench/bench_cuda_build.py [--keep] [extra bazel build flags...]

Prints the figure, the action count and Bazel's critical path; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = "//third_device/torch_cuda:all"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the output base afterwards")
    args, extra = parser.parse_known_args()
    output_base = Path(tempfile.mkdtemp(prefix="torchsplit-bench-cuda-"))
    bazel = [str(REPO / "tools" / "bazel"), f"--output_base={output_base}"]

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*bazel, *command], cwd=REPO, capture_output=True, text=True, env=dict(os.environ)
        )

    try:
        run("info", "output_base")  # server start-up is not part of the figure
        started = time.monotonic()
        proc = run("build", "--disk_cache=", "--noremote_accept_cached", TARGET, *extra)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            return proc.returncode
        actions = re.findall(r"(\d+) total actions?", proc.stderr)
        critical = re.findall(r"Critical Path: ([\d.]+s)", proc.stderr)
        cu_files = len(list((REPO / "third_device" / "torch_cuda").rglob("*.cu")))
        print(f"clean build of {TARGET}: {wall:.1f} s wall")
        count = actions[-1] if actions else "?"
        path = critical[-1] if critical else "?"
        print(f"  actions: {count}; critical path: {path}")
        print(f"  .cu files: {cu_files}; cores: {os.cpu_count()}")
        return 0
    finally:
        run("shutdown")
        if not args.keep:
            shutil.rmtree(output_base, ignore_errors=True)
            subprocess.run(["chmod", "-R", "u+w", str(output_base)], capture_output=True)
            shutil.rmtree(output_base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
