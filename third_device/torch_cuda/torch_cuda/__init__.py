"""torch_cuda: the CUDA backend of torchsplit.

Importing it registers the ``cuda`` device type with torch_core. The API
users expect from ``torch.cuda`` lives in :mod:`torch_cuda.core` and is
re-exported here; settings live in :mod:`torch_cuda.backends`.
"""

from pkgutil import extend_path

# The compiled _CUDAC lives in Bazel's output tree; the Python sources in the
# source tree: let both form one package.
__path__ = extend_path(__path__, __name__)

import os

# Eager module loading unless the user chose otherwise: with lazy loading (the
# default since CUDA 12.2) the first launch of each kernel waits for the
# device to drain, which silently serialises streams (a kernel queued behind
# a long one, or behind an NCCL collective, waits for it). torch_cuda's own
# kernels are few and small. Read once, when _CUDAC initialises the runtime.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")

import torch_core  # noqa: F401  (core first: _CUDAC registers into its registry)
from torch_cuda import _CUDAC, backends, distributed, jit
from torch_cuda.core import *  # noqa: F403  (the torch.cuda-like API)
from torch_cuda.core import __all__ as _core_api

__all__ = ["_CUDAC", "backends", "distributed", "jit", *_core_api]
