"""distributed: collectives at world size 2, one process per rank, on the backend's device."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from torch_core.testing import BackendAdapter

RANK = Path(__file__).with_name("_rank.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_collectives_at_world_size_two(backend: BackendAdapter) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TORCH_CORE_NO_AUTOLOAD": "1",
    }
    package = backend.package or "cpu"
    procs = [
        subprocess.Popen(
            [sys.executable, str(RANK), package, str(rank), "2", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
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
