"""torch_cuda.distributed on any machine: the nccl backend is registered, NCCL loads
from the pinned wheel, and without a GPU the backend fails naming the cause."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

import torch_core.distributed as dist
import torch_cuda
from torch_core.distributed.backend import default_backend
from torch_cuda import distributed as cuda_dist

REQUIREMENTS = Path(__file__).absolute().parents[2] / "tools" / "cuda" / "requirements_lock.txt"


def test_nccl_is_the_default_backend_for_cuda() -> None:
    assert dist.registered_backends()["nccl"] == ("cuda",)
    assert default_backend("cuda") == "nccl"


def test_nccl_loads_without_a_gpu_and_is_the_pinned_wheel() -> None:
    assert cuda_dist.nccl_version() == (2, 28, 9)  # built with CUDA 13.0
    if REQUIREMENTS.is_file():  # a source checkout (Bazel's runfiles lack it)
        pin = re.search(r"^nvidia-nccl-cu13==(\S+)", REQUIREMENTS.read_text(), re.MULTILINE)
        assert pin is not None and pin.group(1) == "2.28.9"


def test_unique_id_needs_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "lo")
    assert len(torch_cuda._CUDAC._nccl_unique_id()) == 128


@pytest.mark.skipif(torch_cuda.device_count() > 0, reason="checks the no-device behaviour")
def test_backend_without_a_gpu_names_the_cause() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("nccl", f"tcp://127.0.0.1:{port}", rank=0, world_size=1, timeout=5)
    try:
        assert dist.get_backend("cuda") == "nccl"
        with pytest.raises(
            dist.DistBackendError,
            match=r"^nccl: CUDA is not available: no (usable CUDA driver|CUDA device) \(cudaError",
        ):
            dist.group().backend_for("cuda")
        # nccl serves cuda tensors only, as PyTorch's refuses CPU tensors.
        with pytest.raises(dist.DistBackendError, match="'nccl' does not support cpu tensors"):
            dist.group().backend_for("cpu")
    finally:
        dist.destroy_process_group()
