#pragma once

#include "c10/core/Device.h"

namespace torch_emu {

// Registers core's ops for the emu device type: core's kernel bodies, queued
// on the call's stream and run by its worker on translated addresses.
void register_emu_kernels(c10::DeviceTypeId emu);

}  // namespace torch_emu
