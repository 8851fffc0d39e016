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
    // The queued closure holds the call, and with it every operand's storage,
    // until the kernel has run.
    driver.stream(call.stream.device.index(), call.stream.id).enqueue([call, body, &driver] {
      body(call, [&driver](const at::Tensor& t) { return driver.translate(t.data_ptr()); });
    });
  };
  at::native::register_core_kernels(reg, launch);
}

}  // namespace torch_emu
