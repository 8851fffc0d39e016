"""torch_core: the device-agnostic core runtime of torchsplit.

Core knows only the CPU; device backends (torch_emu, a vendor's, ...)
register their device types when imported. Backends installed as
distributions are found through the entry point group ``torch_core.backends``
and imported by :func:`load_backends` at import time, unless
``TORCH_CORE_NO_AUTOLOAD=1``.
"""

from pkgutil import extend_path

# The compiled extension lives in Bazel's output tree (bazel-bin/core/torch_core)
# while the Python sources stay in the source tree: let both form one package.
__path__ = extend_path(__path__, __name__)

from torch_core import _C, distributed, jit, memory, profiler
from torch_core._backends import load_backends
from torch_core._config import config, get_num_threads, set_num_threads
from torch_core._creation import arange, empty, full, ones, tensor, zeros
from torch_core._devices import (
    Device,
    device,
    device_count,
    is_available,
    registered_device_types,
    resolve_device,
    synchronize,
)
from torch_core._ops import (
    add,
    div,
    exp,
    matmul,
    max,
    mean,
    mul,
    neg,
    relu,
    softmax,
    sub,
    sum,
    tanh,
)
from torch_core._streams import Event, Stream, current_stream, stream
from torch_core._tensor import Tensor

OutOfMemoryError = _C.OutOfMemoryError
DeviceGuard = _C.DeviceGuard
dtype = _C.dtype
float32 = _C.dtype.float32
float64 = _C.dtype.float64
int64 = _C.dtype.int64
bool = _C.dtype.bool

__all__ = [
    "Device",
    "DeviceGuard",
    "Event",
    "OutOfMemoryError",
    "Stream",
    "Tensor",
    "add",
    "arange",
    "bool",
    "config",
    "current_stream",
    "device",
    "device_count",
    "distributed",
    "div",
    "dtype",
    "empty",
    "exp",
    "float32",
    "float64",
    "full",
    "get_num_threads",
    "int64",
    "is_available",
    "jit",
    "load_backends",
    "matmul",
    "max",
    "mean",
    "memory",
    "mul",
    "neg",
    "ones",
    "profiler",
    "registered_device_types",
    "relu",
    "resolve_device",
    "set_num_threads",
    "softmax",
    "stream",
    "sub",
    "sum",
    "synchronize",
    "tanh",
    "tensor",
    "zeros",
]

load_backends()
