#pragma once

#include "c10/core/Device.h"

namespace torch_emu {

// Registers emu's profiler stubs with core: a mark is a task queued on the
// stream that takes the time when the stream's worker reaches it, so kernel
// intervals are measured where the kernel runs, not where it was launched.
void register_emu_profiler(c10::DeviceTypeId emu);

}  // namespace torch_emu
