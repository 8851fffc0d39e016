"""torch_cuda's adapter for core's conformance suite (torch_core.testing)."""

from __future__ import annotations

from torch_core.testing import BackendAdapter
from torch_cuda.core.runtime import DEVICE_TYPE

ADAPTER = BackendAdapter(
    device_type=DEVICE_TYPE,
    package=__package__,
    unsupported={
        "streams.block": "CUDA has no kernel the host can release; tests/torch_cuda orders "
        "streams with _sleep instead",
        "distributed.shared_device": "NCCL refuses two ranks on one GPU: one rank per device",
    },
)
