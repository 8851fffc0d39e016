#include "torch_cuda/csrc/framework/DeviceScope.h"

#include <cuda_runtime_api.h>

#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda {

DeviceScope::DeviceScope(c10::DeviceIndex index) {
  TORCH_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != index) {
    TORCH_CUDA_CHECK(cudaSetDevice(index));
    changed_ = true;
  }
}

DeviceScope::~DeviceScope() {
  if (changed_) {
    // Cannot fail for a device that was current before, short of a sticky
    // device error, which the next checked call reports anyway.
    ignore_error(cudaSetDevice(previous_));
  }
}

}  // namespace torch_cuda
