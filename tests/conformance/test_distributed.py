"""distributed: collectives at world size 2, one process per rank, on the backend's device.

Rank r uses device ``r % device_count``. A backend whose ranks cannot share a
device (NCCL refuses two ranks on one GPU) declares
``distributed.shared_device`` unsupported: with fewer devices than ranks the
test then skips with that reason, and with two or more it runs one rank per
device."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from torch_core.testing import BackendAdapter

RANK = Path(__file__).with_name("_rank.py")
WORLD = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_collectives_at_world_size_two(backend: BackendAdapter) -> None:
    if backend.device_count() < WORLD:
        why = backend.lacks("distributed.shared_device")
        if why:
            pytest.skip(
                f"{backend.device_type} has {backend.device_count()} device(s) for {WORLD} ranks "
                f"and lacks distributed.shared_device: {why}"
            )
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TORCH_CORE_NO_AUTOLOAD": "1",
    }
    package = backend.package or "cpu"
    procs = [
        subprocess.Popen(
            [sys.executable, str(RANK), package, str(rank), str(WORLD), str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(WORLD)
    ]
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err[-3000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert {r["device"].split(":")[0] for r in results} == {backend.device_type}
    backends = {r["backend"] for r in results}
    assert len(backends) == 1 and "" not in backends, backends
