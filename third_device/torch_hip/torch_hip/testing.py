"""torch_hip's adapter for core's conformance suite (torch_core.testing)."""

from __future__ import annotations

from torch_core.testing import BackendAdapter
from torch_hip import FUSER_UNAVAILABLE
from torch_hip.core.runtime import DEVICE_TYPE

ADAPTER = BackendAdapter(
    device_type=DEVICE_TYPE,
    package=__package__,
    unsupported={
        "streams.block": "HIP has no kernel the host can release (torch_hip.core._sleep holds a "
        "stream for a number of clock cycles instead)",
        "fusion": FUSER_UNAVAILABLE,
        "distributed": "torch_hip registers no process-group backend: RCCL (NCCL's HIP port) "
        "is not packaged in Debian 12",
    },
)
