#pragma once

#include "c10/core/Device.h"

namespace torch_cuda {

// Makes `index` the CUDA runtime's current device for the scope and restores
// the previous one after. Kernel launches, allocations and the legacy default
// stream all act on the current device, so every hook and launcher that
// touches a given device wraps its calls in one. (Core's c10::DeviceGuard is
// the user-facing guard; it goes through CudaHooks::set_device.)
class DeviceScope {
 public:
  explicit DeviceScope(c10::DeviceIndex index);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace torch_cuda
