#include "torch_cuda/csrc/framework/CUDAHooks.h"

#include <memory>
#include <stdexcept>

#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda {

CudaHooks::CudaHooks() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    reason_ = status == cudaErrorInsufficientDriver
                  ? "no usable CUDA driver (" + describe(status) + ")"
                  : "no CUDA device (" + describe(status) + ")";
    return;
  }
  count_ = static_cast<c10::DeviceIndex>(count);
  if (count_ == 0) {
    reason_ = "no CUDA device (the driver reports 0 devices)";
  }
}

void CudaHooks::require_device(c10::DeviceIndex index) const {
  if (count_ == 0) {
    throw std::runtime_error("CUDA is not available: " + reason_);
  }
  if (index < 0 || index >= count_) {
    throw std::out_of_range("cuda:" + std::to_string(index) + " does not exist: there are " +
                            std::to_string(count_) + " CUDA device(s)");
  }
}

c10::DeviceIndex CudaHooks::current_device() const {
  require_device(0);
  int index = 0;
  TORCH_CUDA_CHECK(cudaGetDevice(&index));
  return static_cast<c10::DeviceIndex>(index);
}

void CudaHooks::set_device(c10::DeviceIndex index) {
  require_device(index);
  TORCH_CUDA_CHECK(cudaSetDevice(index));
}

void CudaHooks::synchronize(c10::DeviceIndex index) {
  require_device(index);
  int previous = 0;
  TORCH_CUDA_CHECK(cudaGetDevice(&previous));
  TORCH_CUDA_CHECK(cudaSetDevice(index));
  const cudaError_t status = cudaDeviceSynchronize();
  cudaSetDevice(previous);
  check(status, "cudaDeviceSynchronize()");
}

c10::DeviceTypeId register_cuda_device_type() {
  // Function-local static: registration runs once even if several
  // translation units or extensions ask for it.
  static const c10::DeviceTypeId id =
      c10::DeviceRegistry::instance().register_device_type("cuda", std::make_unique<CudaHooks>());
  return id;
}

int runtime_version() {
  int version = 0;
  TORCH_CUDA_CHECK(cudaRuntimeGetVersion(&version));
  return version;
}

}  // namespace torch_cuda
