"""A CUDA toolkit upgrade touches torch_cuda alone: python3 bench/bench_toolkit.py

1. isolation: a fresh clone builds //... with the default hermetic toolkit (13.0.88),
   then with --config=cuda13_5 (13.5.37) in the same output base; the second build's
   execution log says which actions ran again, by area (core, torch_cuda, other).
2. remote-cache split: the first build filled a private nginx cache; a clean clone
   elsewhere (own output root) builds //... with 13.5.37 against it, read-only: core
   should be all hits, CUDA compiles all misses (their keys name the toolkit's files).
3. cold toolkit fetch: `pip install --no-deps --require-hashes --target` of each lock
   with pip's cache disabled (what tools/dev does once per lock, when a command first uses it).

Prints markdown tables (section() returns them for bench/run_all.py). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bazel_bench import REPO, Checkout, clone

from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import Spawn, load_exec_log

CI = ["--config=ci"]
LOCKS = {
    "13.0.88": "tools/cuda/requirements_lock.txt",
    "13.5.37": "tools/cuda/requirements_lock_13_5.txt",
}
TITLE = "Hermetic CUDA toolkit: an upgrade touches torch_cuda alone"
NOTE = (
    "A fresh clone builds `//...` with the default hermetic toolkit (13.0.88), then "
    "with `--config=cuda13_5` (13.5.37) in the same output base: *re-executed* counts "
    "the second build's spawns (execution log) by the package of their output. The "
    "first build filled a private nginx cache; a clean clone in another directory, "
    "with its own output root, then builds with 13.5.37 reading that cache "
    "(`--remote_upload_local_results=false`). Cold fetch: `pip install --no-deps "
    "--require-hashes --target` of each lock with `--no-cache-dir` (tools/dev does it "
    "once per lock, the first time a command uses that lock; the build itself never "
    "downloads).\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def area(spawn: Spawn) -> str:
    """core, torch_cuda or other, from the package of the spawn's first output."""
    path = spawn.output.split("/bin/", 1)[-1]
    if path.startswith("core/"):
        return "core"
    if path.startswith("third_device/torch_cuda/"):
        return "torch_cuda"
    return "other"


def by_area(spawns: list[Spawn]) -> dict[str, list[Spawn]]:
    groups: dict[str, list[Spawn]] = {"core": [], "torch_cuda": [], "other": []}
    for spawn in spawns:
        groups[area(spawn)].append(spawn)
    return groups


def nvcc(spawns: list[Spawn]) -> list[Spawn]:
    return [s for s in spawns if s.mnemonic == "CudaCompile"]


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def isolation_and_split(work: Path) -> tuple[str, str]:
    # tools/dev installs a toolkit only for a build that uses it: both are used here.
    for flags in ([], ["--config=cuda13_5"]):
        subprocess.run([str(REPO / "tools" / "dev"), "bootstrap", *flags], check=True)
    server = CacheServer(Path(tempfile.mkdtemp(prefix="torchsplit-bench-cache-")), _free_port())
    server.start()
    remote = [f"--remote_cache={server.url}", "--remote_timeout=30"]
    first = Checkout(clone(work / "a"), work / "root-a")
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    second = Checkout(clone(elsewhere / "b"), work / "root-b")
    try:
        log_a = work / "a-13.0.json"
        first.bazel("build", *CI, *remote, f"--execution_log_json_file={log_a}", "//...")
        log_switch = work / "a-13.5.json"
        switch = first.bazel(
            "build", *CI, "--config=cuda13_5", f"--execution_log_json_file={log_switch}", "//..."
        )
        log_b = work / "b-13.5.json"
        second.bazel(
            "build",
            *CI,
            *remote,
            "--remote_upload_local_results=false",
            "--config=cuda13_5",
            f"--execution_log_json_file={log_b}",
            "//...",
        )
        built, rerun, split = (by_area(load_exec_log(p)) for p in (log_a, log_switch, log_b))
    finally:
        first.shutdown()
        second.shutdown()
        server.stop()
        shutil.rmtree(server.state_dir, ignore_errors=True)
    rows = [
        [
            "actions (spawns) of the 13.0.88 build",
            str(len(built["core"])),
            str(len(built["torch_cuda"])),
            str(len(nvcc(built["torch_cuda"]))),
            str(len(built["other"])),
        ],
        [
            f"re-executed after `--config=cuda13_5` ({switch.wall:.0f} s)",
            str(len(rerun["core"])),
            str(len(rerun["torch_cuda"])),
            str(len(nvcc(rerun["torch_cuda"]))),
            str(len(rerun["other"])),
        ],
    ]
    iso = table(["build", "core", "torch_cuda", "of which nvcc", "other"], rows)

    def hits(spawns: list[Spawn]) -> str:
        cacheable = [s for s in spawns if s.cacheable]
        n = sum(1 for s in cacheable if s.hit)
        rate = f" ({n / len(cacheable):.0%})" if cacheable else ""
        return f"{n}/{len(cacheable)}{rate}"

    cuda_other = [s for s in split["torch_cuda"] if s.mnemonic != "CudaCompile"]
    split_rows = [
        [
            "clean clone elsewhere, 13.5.37, cache filled by 13.0.88",
            hits(split["core"]),
            hits(nvcc(split["torch_cuda"])),
            hits(cuda_other),
            hits(split["other"]),
        ]
    ]
    split_table = table(
        ["build", "core hits", "CUDA compiles hits", "other torch_cuda hits", "other hits"],
        split_rows,
    )
    return iso, split_table


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def fetch_cost(work: Path) -> str:
    venv = Path(os.environ.get("TORCHSPLIT_VENV", Path.home() / ".cache/torchsplit/venv"))
    python = venv / "bin" / "python3"
    rows = []
    for version, lock in LOCKS.items():
        target = work / f"fetch-{version}"
        started = time.monotonic()
        subprocess.run(
            [
                str(python),
                *("-m", "pip", "install", "-qq", "--disable-pip-version-check", "--no-deps"),
                *("--no-cache-dir", "--require-hashes", "--target", str(target)),
                *("-r", str(REPO / lock)),
            ],
            check=True,
        )
        wall = time.monotonic() - started
        wheels = sum(1 for p in target.glob("*.dist-info"))
        rows.append(
            [version, f"`{lock}`", str(wheels), f"{wall:.1f} s", f"{_size(target) / 2**20:.0f} MiB"]
        )
        shutil.rmtree(target, ignore_errors=True)
    return table(["toolkit", "lock", "wheels", "cold install", "installed size"], rows)


def locks_summary() -> str:
    """The pinned toolkits, read from the lock files (no download)."""
    rows = []
    for version, lock in LOCKS.items():
        pins = lock_pins(REPO / lock)
        rows.append([version, f"`{lock}`", str(len(pins)), ", ".join(f"{d} {v}" for d, v in pins)])
    return table(["toolkit", "lock", "wheels", "pins"], rows)


def lock_pins(lock: Path) -> list[tuple[str, str]]:
    """(distribution, version) of every `name==version` line of a pip lock file."""
    pins = []
    for line in lock.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "--")) and "==" in line:
            dist, rest = line.split("==", 1)
            pins.append((dist.strip(), rest.replace("\\", " ").split()[0]))
    return pins


def body(work: Path, tiny: bool = False) -> str:
    """The section's tables for docs/benchmarks.md (tiny: the locks only, no build)."""
    parts = ["Pinned toolkits:\n", locks_summary(), ""]
    if not tiny:
        iso, split = isolation_and_split(work)
        parts += ["Isolation (13.0.88 → 13.5.37):\n", iso, "", "Remote-cache split:\n", split, ""]
        parts += ["Cold toolkit fetch:\n", fetch_cost(work), ""]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fetch-only", action="store_true", help="only the cold fetch cost")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="torchsplit-bench-toolkit-"))
    try:
        if args.fetch_only:
            print(fetch_cost(work), flush=True)
        else:
            print(f"## {TITLE}\n\n{NOTE}\n{body(work)}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
