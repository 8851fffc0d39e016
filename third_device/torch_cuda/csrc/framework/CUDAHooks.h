#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "c10/core/DeviceRegistry.h"
#include "torch_cuda/csrc/framework/HostStaging.h"

namespace torch_cuda {

// Core's view of the CUDA runtime. Device discovery happens once; its failure
// is remembered as the reason the device type is unavailable rather than
// thrown at import time, so `import torch_cuda` works without a GPU or driver.
// Stream 0 of each device is CUDA's legacy default stream; others map to
// non-blocking cudaStream_t's created on demand. Host copies go through
// pinned staging buffers (HostStaging), one set per device.
class CudaHooks final : public c10::DeviceHooks {
 public:
  CudaHooks();

  bool is_available() const override { return count_ > 0; }
  c10::DeviceIndex device_count() const override { return count_; }
  c10::DeviceIndex current_device() const override;
  void set_device(c10::DeviceIndex index) override;
  void synchronize(c10::DeviceIndex index) override;
  std::string unavailable_reason() const override { return reason_; }

  void* raw_allocate(size_t bytes, c10::DeviceIndex index) override;
  void raw_free(void* ptr, c10::DeviceIndex index) override;

  void copy_from_host(void* dst, const void* host_src, size_t bytes, const c10::Stream& stream) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes, const c10::Stream& stream) override;
  bool copy_between_devices(void* dst, const c10::Device& dst_device, const void* src,
                            const c10::Device& src_device, size_t bytes) override;

  c10::StreamId create_stream(c10::DeviceIndex index) override;
  bool query_stream(const c10::Stream& stream) override;
  void synchronize_stream(const c10::Stream& stream) override;
  c10::EventId create_event(c10::DeviceIndex index, c10::EventFlag flag) override;
  void destroy_event(c10::EventId event, c10::DeviceIndex index) override;
  void record_event(c10::EventId event, const c10::Stream& stream) override;
  bool query_event(c10::EventId event, c10::DeviceIndex index) override;
  void synchronize_event(c10::EventId event, c10::DeviceIndex index) override;
  void stream_wait_event(const c10::Stream& stream, c10::EventId event) override;
  double elapsed_ms(c10::EventId start, c10::EventId end, c10::DeviceIndex index) override;

  // The CUDA stream behind a core stream id.
  cudaStream_t native_stream(const c10::Stream& stream);
  // Throws, naming the cause, unless `index` is a usable device.
  void require_device(c10::DeviceIndex index) const;

 private:
  cudaEvent_t native_event(c10::EventId event);

  c10::DeviceIndex count_ = 0;
  std::string reason_;
  std::mutex mutex_;
  c10::StreamId next_stream_ = 1;
  c10::EventId next_event_ = 1;
  struct NativeStream {
    c10::DeviceIndex device;
    cudaStream_t handle;
  };
  std::unordered_map<c10::StreamId, NativeStream> streams_;
  std::unordered_map<c10::EventId, cudaEvent_t> events_;
  std::vector<std::unique_ptr<HostStaging>> staging_;  // by device index
};

// Registers "cuda" with core once per process and returns its type id.
c10::DeviceTypeId register_cuda_device_type();

// The registered hooks (registering on first use).
CudaHooks& cuda_hooks();

// The CUDA runtime library version linked in, e.g. 13000 for 13.0.
int runtime_version();
// The newest CUDA runtime the installed driver supports (0 without a driver).
int driver_version();
// The file the CUDA runtime was loaded from (libcudart.so.N, as the loader
// found it through _CUDAC's RUNPATH); empty when it is linked statically.
std::string runtime_library();

}  // namespace torch_cuda
