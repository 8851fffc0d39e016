#include "torch_cuda/csrc/framework/CUDAStream.h"

#include "c10/core/DeviceRegistry.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"

namespace torch_cuda {

CudaStream::CudaStream(c10::DeviceIndex device) : device_(device) {
  const c10::Device target(register_cuda_device_type(), device);
  c10::DeviceRegistry::instance().check_usable(target);
  TORCH_CUDA_CHECK(cudaSetDevice(device));
  TORCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) {
    cudaStreamDestroy(stream_);
  }
}

bool CudaStream::query() const {
  const cudaError_t status = cudaStreamQuery(stream_);
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check(status, "cudaStreamQuery(stream)");
  return true;
}

void CudaStream::synchronize() const { TORCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace torch_cuda
