#include "torch_cuda/csrc/framework/CUDAHooks.h"

#include <dlfcn.h>

#include <memory>
#include <stdexcept>

#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/DeviceScope.h"

namespace torch_cuda {
CudaHooks::CudaHooks() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    reason_ = status == cudaErrorInsufficientDriver ? "no usable CUDA driver (" + describe(status) + ")"
                                                    : "no CUDA device (" + describe(status) + ")";
    return;
  }
  count_ = static_cast<c10::DeviceIndex>(count);
  if (count_ == 0) {
    reason_ = "no CUDA device (the driver reports 0 devices)";
  }
  for (c10::DeviceIndex i = 0; i < count_; ++i) {
    staging_.push_back(std::make_unique<HostStaging>(i));
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
  DeviceScope scope(index);
  TORCH_CUDA_CHECK(cudaDeviceSynchronize());
}

void* CudaHooks::raw_allocate(size_t bytes, c10::DeviceIndex index) {
  require_device(index);
  DeviceScope scope(index);
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    return nullptr;  // core frees its cache and retries
  }
  check(status, "cudaMalloc");
  return ptr;
}

void CudaHooks::raw_free(void* ptr, c10::DeviceIndex index) {
  // cudaFree waits for the device to finish using the memory, so blocks the
  // caching allocator releases are never freed under a running kernel.
  DeviceScope scope(index);
  TORCH_CUDA_CHECK(cudaFree(ptr));
}

cudaStream_t CudaHooks::native_stream(const c10::Stream& stream) {
  if (stream.id == 0) {
    return nullptr;  // the legacy default stream
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = streams_.find(stream.id);
  // Ids are unique across devices; a stream used with another device's id is a caller bug.
  if (it == streams_.end() || it->second.device != stream.device.index()) {
    throw std::invalid_argument("no CUDA stream " + std::to_string(stream.id) + " on " + stream.device.str());
  }
  return it->second.handle;
}

cudaEvent_t CudaHooks::native_event(c10::EventId event) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = events_.find(event);
  if (it == events_.end()) {
    throw std::invalid_argument("no CUDA event " + std::to_string(event));
  }
  return it->second;
}

void CudaHooks::copy_from_host(void* dst, const void* host_src, size_t bytes, const c10::Stream& stream) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());
  staging_[stream.device.index()]->to_device(dst, host_src, bytes, native_stream(stream));
}

void CudaHooks::copy_to_host(void* host_dst, const void* src, size_t bytes, const c10::Stream& stream) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());
  staging_[stream.device.index()]->to_host(host_dst, src, bytes, native_stream(stream));
}

bool CudaHooks::copy_between_devices(void* dst, const c10::Device& dst_device, const void* src,
                                     const c10::Device& src_device, size_t bytes) {
  require_device(src_device.index());
  require_device(dst_device.index());
  // Stream-ordered on both sides, without blocking the host: the copy runs on
  // the destination's current stream (where `dst` was allocated and where
  // its next readers run) after the source's current stream has produced
  // `src`; the source stream then waits for the copy, so later writes to
  // `src` queued there cannot overtake it. Reuse of `src`'s block after a
  // free is a separate matter, whatever stream it was allocated on: core
  // records the destination stream on `src` before calling here
  // (Tensor::record_stream), and the caching allocator defers the free until
  // the copy has run. The runtime stages through the host when the devices
  // have no peer access.
  const cudaStream_t src_stream = native_stream(c10::current_stream(src_device));
  const cudaStream_t dst_stream = native_stream(c10::current_stream(dst_device));
  cudaEvent_t produced = nullptr;
  cudaEvent_t copied = nullptr;
  {
    DeviceScope scope(src_device.index());
    TORCH_CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    TORCH_CUDA_CHECK(cudaEventRecord(produced, src_stream));
  }
  {
    DeviceScope scope(dst_device.index());
    TORCH_CUDA_CHECK(cudaStreamWaitEvent(dst_stream, produced, 0));
    TORCH_CUDA_CHECK(
        cudaMemcpyPeerAsync(dst, dst_device.index(), src, src_device.index(), bytes, dst_stream));
    TORCH_CUDA_CHECK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    TORCH_CUDA_CHECK(cudaEventRecord(copied, dst_stream));
  }
  {
    DeviceScope scope(src_device.index());
    TORCH_CUDA_CHECK(cudaStreamWaitEvent(src_stream, copied, 0));
  }
  // Destroying a recorded event is legal: the runtime releases it once it completes.
  ignore_error(cudaEventDestroy(produced));
  ignore_error(cudaEventDestroy(copied));
  return true;
}

c10::StreamId CudaHooks::create_stream(c10::DeviceIndex index) {
  require_device(index);
  DeviceScope scope(index);
  cudaStream_t stream = nullptr;
  TORCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::lock_guard<std::mutex> lock(mutex_);
  streams_[next_stream_] = NativeStream{index, stream};
  return next_stream_++;
}

bool CudaHooks::query_stream(const c10::Stream& stream) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());  // stream 0 is the current device's legacy stream
  const cudaError_t status = cudaStreamQuery(native_stream(stream));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    return false;
  }
  check(status, "cudaStreamQuery");
  return true;
}

void CudaHooks::synchronize_stream(const c10::Stream& stream) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());
  TORCH_CUDA_CHECK(cudaStreamSynchronize(native_stream(stream)));
}

c10::EventId CudaHooks::create_event(c10::DeviceIndex index, c10::EventFlag flag) {
  require_device(index);
  DeviceScope scope(index);
  cudaEvent_t event = nullptr;
  // Sync-only events skip the timestamp, which makes recording and querying
  // them cheaper (as PyTorch's caching allocator creates its events).
  TORCH_CUDA_CHECK(cudaEventCreateWithFlags(
      &event, flag == c10::EventFlag::kSyncOnly ? cudaEventDisableTiming : cudaEventDefault));
  std::lock_guard<std::mutex> lock(mutex_);
  events_[next_event_] = event;
  return next_event_++;
}

void CudaHooks::destroy_event(c10::EventId event, c10::DeviceIndex) {
  cudaEvent_t native = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = events_.find(event);
    if (it == events_.end()) {
      return;
    }
    native = it->second;
    events_.erase(it);
  }
  ignore_error(cudaEventDestroy(native));
}

void CudaHooks::record_event(c10::EventId event, const c10::Stream& stream) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());
  TORCH_CUDA_CHECK(cudaEventRecord(native_event(event), native_stream(stream)));
}

bool CudaHooks::query_event(c10::EventId event, c10::DeviceIndex) {
  const cudaError_t status = cudaEventQuery(native_event(event));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    return false;
  }
  check(status, "cudaEventQuery");
  return true;
}

void CudaHooks::synchronize_event(c10::EventId event, c10::DeviceIndex) {
  TORCH_CUDA_CHECK(cudaEventSynchronize(native_event(event)));
}

void CudaHooks::stream_wait_event(const c10::Stream& stream, c10::EventId event) {
  require_device(stream.device.index());
  DeviceScope scope(stream.device.index());
  TORCH_CUDA_CHECK(cudaStreamWaitEvent(native_stream(stream), native_event(event), 0));
}

double CudaHooks::elapsed_ms(c10::EventId start, c10::EventId end, c10::DeviceIndex) {
  float ms = 0;
  TORCH_CUDA_CHECK(cudaEventElapsedTime(&ms, native_event(start), native_event(end)));
  return ms;
}

c10::DeviceTypeId register_cuda_device_type() {
  // Function-local static: registration runs once even if asked repeatedly.
  static const c10::DeviceTypeId id =
      c10::DeviceRegistry::instance().register_device_type("cuda", std::make_unique<CudaHooks>());
  return id;
}

CudaHooks& cuda_hooks() {
  return static_cast<CudaHooks&>(c10::DeviceRegistry::instance().hooks(register_cuda_device_type()));
}

int runtime_version() {
  int version = 0;
  TORCH_CUDA_CHECK(cudaRuntimeGetVersion(&version));
  return version;
}

std::string runtime_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaRuntimeGetVersion), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  const std::string file = info.dli_fname;
  // Statically linked, the symbol is in the extension itself.
  return file.find("libcudart") == std::string::npos ? std::string() : file;
}

int driver_version() {
  int version = 0;
  TORCH_CUDA_CHECK(cudaDriverGetVersion(&version));  // 0 when no driver is installed
  return version;
}

}  // namespace torch_cuda
