"""torch_emu's fuser for torch_core.jit.

emu runs host code on its stream workers, so it reuses core's host-code
fuser unchanged: the same generated C++ and the same cached shared object as
the CPU. What differs is the launch, in C++ (csrc/jit/EmuFusedLauncher.cpp,
registered when _EMUC loads): one task queued on the current stream, which
translates every operand's device address and calls the kernel.
"""

from torch_core import jit as _jit
from torch_emu.core.runtime import DEVICE_TYPE

fuser = _jit.HostCodeFuser(DEVICE_TYPE)
_jit.register_fuser(DEVICE_TYPE, fuser)

__all__ = ["fuser"]
