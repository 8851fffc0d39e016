#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "aten/KernelCall.h"
#include "c10/core/Device.h"
#include "csrc/jit/FusedFunction.h"

namespace torch_core::jit {

// Runs a host-compiled fused function for one call: resolves the call's
// tensors to host pointers and calls `fn(inputs, out, call.size)` where the
// device's code can run. The CPU calls it at once; an accelerator whose
// device code is host code (torch_emu) queues it on call.stream. A device
// whose kernels are not host code (e.g. compiled at run time by a vendor
// compiler) needs no launcher: it registers its fused kernels with the
// dispatcher itself and launches them through launch_fused (FusedOps.h).
using FusedLauncher = std::function<void(FusedFunction fn, const at::KernelCall& call)>;

// Process-wide table: device type -> launcher of host-compiled fused kernels.
class FusedLaunchers {
 public:
  static FusedLaunchers& instance();

  // Throws std::invalid_argument if the device type already has one.
  void register_launcher(c10::DeviceTypeId type, FusedLauncher launcher);
  bool has_launcher(c10::DeviceTypeId type) const;
  // Throws std::invalid_argument naming the device type when it has none.
  const FusedLauncher& launcher(c10::DeviceTypeId type) const;

 private:
  FusedLaunchers() = default;

  mutable std::mutex mutex_;
  std::map<c10::DeviceTypeId, FusedLauncher> launchers_;  // nodes are stable, never erased
  std::map<c10::DeviceTypeId, std::string> owners_;  // RegistrationSite of each launcher
};

}  // namespace torch_core::jit
