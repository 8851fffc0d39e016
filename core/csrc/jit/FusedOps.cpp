#include "csrc/jit/FusedOps.h"

#include <stdexcept>

#include "aten/Dispatcher.h"
#include "aten/Functions.h"
#include "c10/core/Stream.h"
#include "csrc/jit/FusedLaunchers.h"

namespace torch_core::jit {

void register_host_fused_kernel(const std::string& name, c10::DeviceTypeId type, FusedFunction fn) {
  // Look the launcher up now, so a device without one fails at compile time
  // with its name, not at the first launch.
  const FusedLauncher& launcher = FusedLaunchers::instance().launcher(type);
  at::Dispatcher& dispatcher = at::Dispatcher::instance();
  if (dispatcher.has_kernel(name, type)) {
    return;
  }
  try {
    dispatcher.register_kernel(name, type, [&launcher, fn](const at::KernelCall& call) { launcher(fn, call); });
  } catch (const std::invalid_argument&) {
    // Another thread registered the same graph's kernel in between: fine.
  }
}

at::Tensor launch_fused(const std::string& name, const std::vector<at::Tensor>& inputs, const at::Shape& out_shape) {
  if (inputs.empty()) {
    throw std::invalid_argument("launch_fused(" + name + "): a fused kernel needs at least one tensor input");
  }
  const at::Tensor& first = inputs.front();
  for (const at::Tensor& t : inputs) {
    if (t.device() != first.device() || t.dtype() != first.dtype() || t.shape() != first.shape()) {
      throw std::invalid_argument("launch_fused(" + name + "): inputs differ in device, dtype or shape (" +
                                  first.device().str() + " " + c10::name(first.dtype()) + at::shape_str(first.shape()) +
                                  " vs " + t.device().str() + " " + c10::name(t.dtype()) + at::shape_str(t.shape()) +
                                  ")");
    }
  }
  at::KernelCall call;
  call.inputs = inputs;
  call.out = at::empty(out_shape, first.dtype(), first.device());
  call.input_strides.assign(inputs.size(), first.strides());
  // The fused graph sees its inputs as one flat run of elements.
  call.outer = 1;
  call.size = first.numel();
  call.inner = 1;
  call.stream = c10::current_stream(first.device());
  at::Dispatcher::instance().call(name, call);
  return call.out;
}

}  // namespace torch_core::jit
