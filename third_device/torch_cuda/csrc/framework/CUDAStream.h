#pragma once

#include <cuda_runtime_api.h>

#include "c10/core/Device.h"

namespace torch_cuda {

// An owned, non-blocking CUDA stream on one device.
class CudaStream {
 public:
  // Throws (naming the cause) when the device does not exist or CUDA is unusable.
  explicit CudaStream(c10::DeviceIndex device);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  // True when all work queued so far has finished.
  bool query() const;
  void synchronize() const;

  c10::DeviceIndex device() const { return device_; }
  cudaStream_t handle() const { return stream_; }

 private:
  c10::DeviceIndex device_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace torch_cuda
