#include "csrc/jit/FusedLaunchers.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "c10/core/DeviceRegistry.h"

namespace torch_core::jit {

FusedLaunchers& FusedLaunchers::instance() {
  static auto* launchers = new FusedLaunchers();
  return *launchers;
}

void FusedLaunchers::register_launcher(c10::DeviceTypeId type, FusedLauncher launcher) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!launchers_.emplace(type, std::move(launcher)).second) {
    throw std::invalid_argument("device type '" + c10::DeviceRegistry::instance().name(type) +
                                "' already has a fused-kernel launcher");
  }
}

bool FusedLaunchers::has_launcher(c10::DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return launchers_.count(type) != 0;
}

const FusedLauncher& FusedLaunchers::launcher(c10::DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = launchers_.find(type);
  if (it == launchers_.end()) {
    throw std::invalid_argument("device type '" + c10::DeviceRegistry::instance().name(type) +
                                "' has no launcher for host-compiled fused kernels");
  }
  return it->second;
}

}  // namespace torch_core::jit
