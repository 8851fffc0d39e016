"""torch_core: the device-agnostic core runtime of torchsplit.

Core knows only the CPU; device backends (torch_emu, ...) register their
device types at import time. Backends installed as distributions are found
through the entry point group ``torch_core.backends`` and imported by
:func:`load_backends`, unless ``TORCH_CORE_NO_AUTOLOAD=1``.
"""

from pkgutil import extend_path

# The compiled extension lives in Bazel's output tree (bazel-bin/core/torch_core)
# while the Python sources stay in the source tree: let both form one package.
__path__ = extend_path(__path__, __name__)

from torch_core import _C
from torch_core._backends import load_backends

Device = _C.Device


def device(text: str) -> "_C.Device":
    """Parses ``"cpu"``, ``"emu"`` or ``"emu:1"`` into a Device."""
    return _C.Device(text)


def registered_device_types() -> list[str]:
    """Device types known to this process: ``"cpu"`` and those of imported backends."""
    return list(_C.registered_device_types())


__all__ = ["Device", "device", "load_backends", "registered_device_types"]

load_backends()
