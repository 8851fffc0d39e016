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
from torch_emu import _EMUC, backends, distributed, jit
from torch_emu.core import *  # noqa: F403  (the torch.cuda-like API)
from torch_emu.core import __all__ as _core_api

__all__ = ["_EMUC", "backends", "distributed", "jit", *_core_api]
