#include "torch_cuda/csrc/framework/DeviceProperties.h"

#include <cuda_runtime_api.h>

#include "c10/core/DeviceRegistry.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"

namespace torch_cuda {

DeviceProperties device_properties(c10::DeviceIndex index) {
  // Core's check first: it says "no driver" or "no such device" in core's words.
  c10::DeviceRegistry::instance().check_usable(c10::Device(register_cuda_device_type(), index));
  cudaDeviceProp prop{};
  TORCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceProperties out;
  out.name = prop.name;
  out.major = prop.major;
  out.minor = prop.minor;
  out.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  out.multi_processor_count = prop.multiProcessorCount;
  out.warp_size = prop.warpSize;
  out.shared_memory_per_block = static_cast<int64_t>(prop.sharedMemPerBlock);
  out.max_threads_per_block = prop.maxThreadsPerBlock;
  return out;
}

}  // namespace torch_cuda
