"""Starts one process per rank running rank_worker.py, bounded in time; kills stragglers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

WORKER = Path(__file__).with_name("rank_worker.py")


@dataclass
class RankResult:
    rank: int
    returncode: int
    stdout: str
    stderr: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ranks(
    scenario: str,
    world_size: int,
    *,
    device: str = "cpu",
    ranks: list[int] | None = None,
    timeout: float = 10.0,
    wall_clock: float = 120.0,
    args: list[str] | None = None,
) -> list[RankResult]:
    """Runs ``scenario`` on ``ranks`` (default: all) of a ``world_size`` group.

    ``timeout`` is the process group's; ``wall_clock`` caps the whole run, after
    which every rank still alive is killed and the test fails.
    """
    port = free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env["TORCH_CORE_NO_AUTOLOAD"] = "1"
    procs = []
    for rank in ranks if ranks is not None else range(world_size):
        cmd = [
            sys.executable,
            str(WORKER),
            scenario,
            device,
            str(rank),
            str(world_size),
            str(port),
            str(timeout),
            *(args or []),
        ]
        procs.append(
            (
                rank,
                subprocess.Popen(
                    cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                ),
            )
        )
    deadline = time.monotonic() + wall_clock
    results = []
    try:
        for rank, proc in procs:
            left = max(0.1, deadline - time.monotonic())
            try:
                out, err = proc.communicate(timeout=left)
            except subprocess.TimeoutExpired as error:
                raise AssertionError(
                    f"{scenario}: rank {rank} still running after {wall_clock:.0f} s (hang)"
                ) from error
            results.append(RankResult(rank, proc.returncode, out, err))
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return results


def check_ok(results: list[RankResult]) -> list[RankResult]:
    for r in results:
        assert r.returncode == 0, f"rank {r.rank} exited {r.returncode}:\n{r.stderr[-3000:]}"
    return results
