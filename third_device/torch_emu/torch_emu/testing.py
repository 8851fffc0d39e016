"""torch_emu's adapter for core's conformance suite (torch_core.testing)."""

from __future__ import annotations

from torch_core.testing import BackendAdapter, Release
from torch_emu import _EMUC
from torch_emu.core.runtime import DEVICE_TYPE


def _block(stream) -> Release:
    # A queued kernel that waits for the host: ordering without timing.
    gate = _EMUC._block_stream(stream.device.index, stream.id)
    return gate.open


ADAPTER = BackendAdapter(device_type=DEVICE_TYPE, package=__package__, block=_block)
