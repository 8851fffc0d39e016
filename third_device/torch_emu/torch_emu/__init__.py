"""torch_emu: an emulated accelerator for torchsplit.

Importing it registers the ``emu`` device type (``TORCH_EMU_DEVICES`` devices,
default 2) and its kernels with torch_core. It behaves like a GPU where it
matters: device memory is a separate heap per device, reached from the host
only through copies; every stream is a worker thread running kernels
asynchronously and in order. The ``torch.cuda``-like API is in
:mod:`torch_emu.core`, re-exported here; settings are in :mod:`torch_emu.backends`.
"""

from pkgutil import extend_path

# The compiled _EMUC lives in Bazel's output tree; the Python sources in the
# source tree: let both form one package.
__path__ = extend_path(__path__, __name__)

import torch_core  # noqa: F401  (core first: _EMUC registers into its registry)
from torch_emu import _EMUC, backends
from torch_emu.core import (
    Event,
    Stream,
    current_device,
    current_stream,
    device,
    device_count,
    empty_cache,
    is_available,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
    set_device,
    stream,
    synchronize,
)

__all__ = [
    "_EMUC",
    "Event",
    "Stream",
    "backends",
    "current_device",
    "current_stream",
    "device",
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device",
    "stream",
    "synchronize",
]
