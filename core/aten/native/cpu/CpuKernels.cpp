// Registers core's kernels for the CPU: run at once, on host memory.
#include "aten/Dispatcher.h"
#include "aten/native/Kernels.h"
#include "c10/core/RegistrationSite.h"

namespace at::native {
namespace {

const bool registered = [] {
  c10::RegistrationSite site("torch_core");  // the owner errors name
  auto reg = [](const char* op, Kernel kernel) {
    Dispatcher::instance().register_kernel(op, c10::kCpuDeviceType, std::move(kernel));
  };
  auto launch = [](const KernelCall& call, auto&& body) {
    body(call, [](const Tensor& t) { return static_cast<char*>(t.data_ptr()); });
  };
  register_core_kernels(reg, launch);
  return true;
}();

}  // namespace
}  // namespace at::native
