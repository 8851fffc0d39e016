"""The nccl backend across 2 processes, one GPU each, against NumPy.

Marked gpu (skipped without a CUDA device by tests/conftest.py) and skipped
with fewer than 2 devices: NCCL needs one device per rank here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import torch_cuda

sys.path.insert(0, str(Path(__file__).absolute().parents[1] / "distributed"))

from launcher import check_ok, run_ranks

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        torch_cuda.device_count() < 2,
        reason=f"needs 2 CUDA devices, found {torch_cuda.device_count()}",
    ),
]


def test_every_nccl_collective_matches_numpy() -> None:
    results = check_ok(run_ranks("nccl_collectives", 2, device="cuda", timeout=60, wall_clock=400))
    for r in results:
        info = json.loads(r.stdout.strip().splitlines()[-1])
        assert info["backend"] == "nccl"
        assert info["checked"] > 0
        assert info["errors"] == ["all_reduce: rank 1 has shape (4,) but rank 0 has (3,)"]
