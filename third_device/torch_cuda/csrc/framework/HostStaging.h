#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>

#include "c10/core/Device.h"

namespace torch_cuda {

// Pinned (page-locked) host buffers through which pageable host memory is
// copied to and from one device. Core's CPU tensors are pageable, and a
// cudaMemcpyAsync from pageable memory is staged by the driver anyway, with
// no overlap; staging ourselves through two pinned chunks lets the host
// memcpy of chunk i+1 overlap the DMA of chunk i, and makes the transfer a
// real asynchronous copy ordered on the caller's stream.
//
// One instance per device, owned by CudaHooks (the registered hooks object);
// a mutex serialises copies through it.
class HostStaging {
 public:
  // Each of the two chunks (4 MiB): large enough to reach full PCIe/NVLink
  // bandwidth, small enough that a first copy does not pin much memory.
  static constexpr size_t kChunk = size_t{4} << 20;

  explicit HostStaging(c10::DeviceIndex device) : device_(device) {}
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Both are ordered on `stream` (work queued before runs first) and complete
  // when they return: the caller may reuse or read its host memory at once.
  // The caller has made the device current.
  void to_device(void* dst, const void* host_src, size_t bytes, cudaStream_t stream);
  void to_host(void* host_dst, const void* src, size_t bytes, cudaStream_t stream);

 private:
  void ensure_buffers();

  c10::DeviceIndex device_;
  std::mutex mutex_;
  void* buffers_[2] = {nullptr, nullptr};
  // Recorded after the copy that last used each buffer: it may be refilled
  // once the event has completed.
  cudaEvent_t done_[2] = {nullptr, nullptr};
};

}  // namespace torch_cuda
