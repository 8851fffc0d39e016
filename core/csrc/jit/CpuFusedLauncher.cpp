// The CPU's launcher of host-compiled fused kernels: run at once, on the
// tensors' own (host) memory.
#include <vector>

#include "c10/core/RegistrationSite.h"
#include "csrc/jit/FusedLaunchers.h"

namespace torch_core::jit {
namespace {

const bool registered = [] {
  c10::RegistrationSite site("torch_core");
  FusedLaunchers::instance().register_launcher(c10::kCpuDeviceType, [](FusedFunction fn, const at::KernelCall& call) {
    std::vector<const void*> inputs;
    inputs.reserve(call.inputs.size());
    for (const at::Tensor& t : call.inputs) {
      inputs.push_back(t.data_ptr());
    }
    fn(inputs.data(), call.out.data_ptr(), call.size);
  });
  return true;
}();

}  // namespace
}  // namespace torch_core::jit
