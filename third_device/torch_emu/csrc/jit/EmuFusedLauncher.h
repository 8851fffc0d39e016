#pragma once

#include "c10/core/Device.h"

namespace torch_emu {

// Lets emu run core's host-compiled fused kernels (torch_core.jit): emu's
// device code is host code, so the CPU code generator's shared objects run
// unchanged, as one task queued on the call's stream that translates every
// operand's device address first.
void register_emu_fused_launcher(c10::DeviceTypeId emu);

}  // namespace torch_emu
