#pragma once

#include "c10/core/Device.h"
#include "c10/core/DeviceRegistry.h"

namespace c10 {

// Makes `device` its type's current device for the calling thread until the
// guard goes away, then restores the previous one (RAII, like PyTorch's).
class DeviceGuard {
 public:
  explicit DeviceGuard(const Device& device)
      : hooks_(DeviceRegistry::instance().hooks(device.type())),
        type_(device.type()),
        previous_(hooks_.current_device()) {
    if (previous_ != device.index()) {
      hooks_.set_device(device.index());
    }
  }
  ~DeviceGuard() { hooks_.set_device(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  Device previous() const { return Device(type_, previous_); }

 private:
  DeviceHooks& hooks_;
  DeviceTypeId type_;
  DeviceIndex previous_;
};

}  // namespace c10
