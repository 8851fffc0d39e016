#pragma once

#include <cstdint>
#include <string>

#include "c10/core/Device.h"

namespace torch_cuda {

// What torch.cuda.get_device_properties reports, from cudaGetDeviceProperties.
struct DeviceProperties {
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  int major = 0;     // compute capability, e.g. 9.0 for sm_90
  int minor = 0;
  int64_t total_memory = 0;  // bytes
  int multi_processor_count = 0;
  int warp_size = 0;
  int64_t shared_memory_per_block = 0;  // bytes, without opt-in
  int max_threads_per_block = 0;
};

// Throws (naming the cause) when the device does not exist or CUDA is unusable.
DeviceProperties device_properties(c10::DeviceIndex index);

}  // namespace torch_cuda
