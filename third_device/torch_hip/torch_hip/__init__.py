"""torch_hip: torchsplit's HIP (ROCm) backend, derived from torch_cuda's sources.

Its kernels, runtime hooks, profiler stubs and ``torch.cuda``-like API
(:mod:`torch_hip.core`) are torch_cuda's, translated to HIP at build time
(``hipify_sources``, torch.utils.hipify's table) and compiled by hipcc; only
what is HIP's own is written here (docs/adding-a-backend.md). Importing it registers
its device type (``core.runtime.DEVICE_TYPE``) with torch_core. Without an AMD
GPU it still imports: ``is_available()`` is False and :func:`unavailable_reason`
says why.
"""

from pkgutil import extend_path

# The compiled _HIPC and the translated torch_hip.core live in Bazel's output
# tree, this file in the source tree: let both form one package.
__path__ = extend_path(__path__, __name__)

import torch_core  # noqa: F401  (core first: _HIPC registers into its registry)
from torch_hip import _HIPC
from torch_hip.core import *  # noqa: F403  (the torch.cuda-like API, translated)
from torch_hip.core import __all__ as _core_api

# Why torch_hip has no fuser (torch_core.jit runs its graphs eagerly).
FUSER_UNAVAILABLE: str = _HIPC._FUSER_UNAVAILABLE


def unavailable_reason() -> str:
    """Why the device type is unavailable ("" when a device is usable)."""
    return str(_HIPC._unavailable_reason())


__all__ = ["FUSER_UNAVAILABLE", "_HIPC", "unavailable_reason", *_core_api]
