#include "torch_emu/csrc/aten/EmuKernels.h"

#include <utility>

#include "aten/Dispatcher.h"
#include "aten/native/Kernels.h"
#include "torch_emu/csrc/framework/EmuDriver.h"

namespace torch_emu {

void register_emu_kernels(c10::DeviceTypeId emu) {
  auto reg = [emu](const char* op, at::Kernel kernel) {
    at::Dispatcher::instance().register_kernel(op, emu, std::move(kernel));
  };
  auto launch = [](const at::KernelCall& call, auto body) {
    EmuDriver& driver = EmuDriver::instance();
    // Like a real device's launcher, the queued kernel does not own its
    // operands: the caller may drop them as soon as this returns, and core's
    // stream-aware frees keep their blocks from reuse until the kernel ran.
    driver.launch(call.stream, [queued = at::borrowed(call), body, &driver] {
      body(queued, [&driver](const at::Tensor& t) { return driver.translate(t.data_ptr()); });
    });
  };
  at::native::register_core_kernels(reg, launch);
}

}  // namespace torch_emu
