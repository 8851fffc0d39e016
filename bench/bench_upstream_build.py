"""Benchmark: cold and warm Bazel builds of real c10 and c10/cuda on the restructured tree.

Usage: python3 bench/bench_upstream_build.py [TREE] [--no-remote]

TREE is the tree `tools/dev upstream` restructured (default
~/.cache/torchsplit/upstream/2.6.0-split). Every step runs with an output root of its
own (a fresh temporary directory), after the Bazel server has started (start-up is
not part of the figures):

1. cold c10: `build //c10/...` (core's libraries and c10's test binaries), no disk
   cache and no remote cache read (--noremote_accept_cached; results are uploaded):
   every action runs here;
2. no-op: the same command again (nothing to do);
3. cold c10/cuda: `build //third_device/torch_cuda:c10_cuda :c10_cuda_12_6` in the same
   output root (core's objects already there): c10/cuda's 11 host sources against each
   toolkit;
4. warm from the remote cache: a second fresh output root, both commands with
   --config=remote-cache (what a CI run or a clone elsewhere sees after steps 1 and 3
   uploaded); skipped with --no-remote (the cold steps then use no remote cache at all).

Prints wall time, actions and Bazel's process summary per step, with the tree's HEAD,
the torchsplit commit and the machine. Asserts nothing (no timed assertions).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bazel_bench import REPO, Checkout, Run, machine

DEFAULT_TREE = Path.home() / ".cache" / "torchsplit" / "upstream" / "2.6.0-split"
C10 = ["//c10/..."]
C10_CUDA = ["//third_device/torch_cuda:c10_cuda", "//third_device/torch_cuda:c10_cuda_12_6"]
# Cold: no disk cache, nothing read from the remote cache; results are uploaded to it, so
# the warm step reads what this run built.
COLD = ["--config=remote-cache", "--disk_cache=", "--noremote_accept_cached"]


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else "?"


def _line(step: str, run: Run) -> str:
    stats = run.stats
    summary = (
        ", ".join(f"{n} {kind}" for kind, n in sorted(stats.by_kind.items())) if stats else "?"
    )
    return f"{step:<34} {run.wall:7.1f} s  {run.actions or 0:4d} actions  ({summary})"


def _remove(path: Path) -> None:
    subprocess.run(["chmod", "-R", "u+w", str(path)], capture_output=True, check=False)
    shutil.rmtree(path, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=DEFAULT_TREE)
    parser.add_argument("--no-remote", action="store_true", help="skip the remote-cache step")
    args = parser.parse_args()
    tree: Path = args.tree
    if not (tree / "tools" / "bazel").exists():
        sys.stderr.write(f"bench_upstream_build: no restructured tree at {tree}\n")
        return 2
    load = os.getloadavg()
    print(f"tree: {tree} (HEAD {_git(tree, 'rev-parse', '--short=12', 'HEAD')})")
    print(f"torchsplit: {_git(REPO, 'rev-parse', '--short=12', 'HEAD')}")
    print(f"machine: {machine()}; load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    roots = [Path(tempfile.mkdtemp(prefix="torchsplit-bench-upstream-")) for _ in range(2)]
    cold, warm = (Checkout(tree, root) for root in roots)
    flags = COLD[1:] if args.no_remote else COLD
    try:
        cold.bazel("info", "output_base")
        print(_line("cold c10 (//c10/...)", cold.bazel("build", *flags, *C10)))
        print(_line("no-op c10 (again)", cold.bazel("build", *flags, *C10)))
        print(_line("cold c10/cuda (13.0 and 12.6)", cold.bazel("build", *flags, *C10_CUDA)))
        print(_line("no-op c10/cuda (again)", cold.bazel("build", *flags, *C10_CUDA)))
        if not args.no_remote:
            warm.bazel("info", "output_base")
            remote = "--config=remote-cache"
            print(_line("warm c10, remote cache", warm.bazel("build", remote, *C10)))
            print(_line("warm c10/cuda, remote cache", warm.bazel("build", remote, *C10_CUDA)))
        load = os.getloadavg()
        print(f"load after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        return 0
    finally:
        for checkout in (cold, warm):
            checkout.shutdown()
        for root in roots:
            _remove(root)


if __name__ == "__main__":
    sys.exit(main())
