#include "csrc/jit/FusedLaunchers.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"

namespace torch_core::jit {

FusedLaunchers& FusedLaunchers::instance() {
  static auto* launchers = new FusedLaunchers();
  return *launchers;
}

void FusedLaunchers::register_launcher(c10::DeviceTypeId type, FusedLauncher launcher) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (launchers_.count(type) != 0) {
    throw std::invalid_argument(c10::RegistrationSite::collision(
        "fused-kernel launcher for device type", c10::DeviceRegistry::instance().name(type), owners_[type]));
  }
  launchers_.emplace(type, std::move(launcher));
  owners_.emplace(type, c10::RegistrationSite::current());
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
