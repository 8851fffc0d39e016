#pragma once

#include "c10/core/DeviceRegistry.h"

namespace torch_emu {

// Registers the "emu" device type with core (once per process) and returns
// its id: runtime, memory, copies, streams and events in one call.
c10::DeviceTypeId register_emu_device_type();

}  // namespace torch_emu
