#pragma once

#include <string>
#include <vector>

#include "aten/Tensor.h"
#include "c10/core/Device.h"
#include "csrc/jit/FusedFunction.h"

namespace torch_core::jit {

// A fused kernel is an op of the dispatcher named after its graph
// ("fused_<hash>"), so everything that observes dispatch (the profiler) sees
// one kernel call per fused launch, exactly as for a built-in op.

// Registers `fn` as op `name` for a device type, launched by that type's
// FusedLauncher. Idempotent per (name, type): the name is a hash of the
// graph, so a second registration would be the same kernel.
void register_host_fused_kernel(const std::string& name, c10::DeviceTypeId type, FusedFunction fn);

// Allocates the result (out_shape, the inputs' dtype, on their device) and
// dispatches op `name` once on the device's current stream, with
// KernelCall::size = the inputs' element count. Every input must have the
// first input's device, dtype and shape (the fuser's guards ensure it); this
// checks again, because a wrong pointer here is memory corruption.
at::Tensor launch_fused(const std::string& name, const std::vector<at::Tensor>& inputs, const at::Shape& out_shape);

}  // namespace torch_core::jit
