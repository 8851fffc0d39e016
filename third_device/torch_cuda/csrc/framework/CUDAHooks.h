#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "c10/core/DeviceRegistry.h"

namespace torch_cuda {

// Core's view of the CUDA runtime: device count, current device, sync.
// Device discovery happens once; its failure is remembered as the reason the
// device type is unavailable rather than thrown at import time, so
// `import torch_cuda` works on a machine without a GPU or driver.
class CudaHooks final : public c10::DeviceHooks {
 public:
  CudaHooks();

  bool is_available() const override { return count_ > 0; }
  c10::DeviceIndex device_count() const override { return count_; }
  c10::DeviceIndex current_device() const override;
  void set_device(c10::DeviceIndex index) override;
  void synchronize(c10::DeviceIndex index) override;
  std::string unavailable_reason() const override { return reason_; }

 private:
  void require_device(c10::DeviceIndex index) const;

  c10::DeviceIndex count_ = 0;
  std::string reason_;
};

// Registers "cuda" with core once per process and returns its type id.
c10::DeviceTypeId register_cuda_device_type();

// The CUDA runtime library version linked in, e.g. 13000 for 13.0.
int runtime_version();

}  // namespace torch_cuda
