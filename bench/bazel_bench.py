"""Helpers for the build benchmarks: clones with their own output root, timed Bazel runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools" / "python"))

from torchsplit.cache.stats import CacheStats, parse_summary  # noqa: E402

_TOTAL_ACTIONS = re.compile(r"INFO: Build completed successfully, (\d+) total actions?")


@dataclass(frozen=True)
class Run:
    wall: float
    stdout: str
    stderr: str
    stats: CacheStats | None

    @property
    def actions(self) -> int | None:
        found = _TOTAL_ACTIONS.findall(self.stderr)
        return int(found[-1]) if found else None


class Checkout:
    """A checkout built by tools/bazel with its own --output_user_root."""

    def __init__(self, path: Path, user_root: Path, env: dict[str, str] | None = None) -> None:
        self.path = path
        self.user_root = user_root
        self.env = dict(os.environ)
        self.env.update(env or {})

    def bazel(self, *args: str, check: bool = True, timeout: float = 3600) -> Run:
        launcher = self.path / "tools" / "bazel"
        if not launcher.exists():  # e.g. the synthetic tree: use this repository's
            launcher = REPO / "tools" / "bazel"
        command = [str(launcher), f"--output_user_root={self.user_root}"]
        started = time.monotonic()
        proc = subprocess.run(
            [*command, *args],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        wall = time.monotonic() - started
        if check and proc.returncode != 0:
            raise RuntimeError(f"bazel {' '.join(args)} failed:\n{proc.stderr[-4000:]}")
        try:
            stats: CacheStats | None = parse_summary(proc.stderr)
        except Exception:
            stats = None
        return Run(wall, proc.stdout, proc.stderr, stats)

    def shutdown(self) -> None:
        self.bazel("shutdown", check=False, timeout=120)


def clone(dest: Path, source: Path = REPO) -> Path:
    """A fresh clone of ``source``'s HEAD (committed state only) at ``dest``."""
    subprocess.run(["git", "clone", "--quiet", str(source), str(dest)], check=True)
    return dest


def machine() -> str:
    cpus = os.cpu_count() or 0
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return f"{cpus} cores ({model}), {mem:.0f} GiB RAM"
