#include "torch_emu/csrc/jit/EmuFusedLauncher.h"

#include <vector>

#include "csrc/jit/FusedLaunchers.h"
#include "torch_emu/csrc/framework/EmuDriver.h"

namespace torch_emu {

void register_emu_fused_launcher(c10::DeviceTypeId emu) {
  torch_core::jit::FusedLaunchers::instance().register_launcher(
      emu, [](torch_core::jit::FusedFunction fn, const at::KernelCall& call) {
        EmuDriver& driver = EmuDriver::instance();
        // One queued task per launch: the whole fused graph is one kernel on
        // the stream. Operands are borrowed, as by the op launcher.
        driver.launch(call.stream, [fn, call = at::borrowed(call), &driver] {
          std::vector<const void*> inputs;
          inputs.reserve(call.inputs.size());
          for (const at::Tensor& t : call.inputs) {
            inputs.push_back(driver.translate(t.data_ptr()));
          }
          fn(inputs.data(), driver.translate(call.out.data_ptr()), call.size);
        });
      });
}

}  // namespace torch_emu
