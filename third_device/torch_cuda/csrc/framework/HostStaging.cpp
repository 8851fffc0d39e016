#include "torch_cuda/csrc/framework/HostStaging.h"

#include <algorithm>
#include <cstring>

#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda {

HostStaging::~HostStaging() {
  // Runs at process exit at the earliest (the hooks live in core's registry);
  // the driver may already be shutting down, so errors are ignored.
  for (int i = 0; i < 2; ++i) {
    if (done_[i] != nullptr) {
      ignore_error(cudaEventDestroy(done_[i]));
    }
    if (buffers_[i] != nullptr) {
      ignore_error(cudaFreeHost(buffers_[i]));
    }
  }
}

void HostStaging::ensure_buffers() {
  if (buffers_[0] != nullptr) {
    return;
  }
  for (int i = 0; i < 2; ++i) {
    // Portable: usable by every device's copies, though this one serves one.
    TORCH_CUDA_CHECK(cudaHostAlloc(&buffers_[i], kChunk, cudaHostAllocPortable));
    TORCH_CUDA_CHECK(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming));
  }
}

void HostStaging::to_device(void* dst, const void* host_src, size_t bytes, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_buffers();
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(host_src);
  for (size_t offset = 0, chunk = 0; offset < bytes; offset += kChunk, ++chunk) {
    const size_t n = std::min(kChunk, bytes - offset);
    const int b = static_cast<int>(chunk % 2);
    // The DMA that last read this buffer must be done before it is refilled;
    // the other buffer's DMA keeps running meanwhile.
    TORCH_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    std::memcpy(buffers_[b], in + offset, n);
    TORCH_CUDA_CHECK(cudaMemcpyAsync(out + offset, buffers_[b], n, cudaMemcpyHostToDevice, stream));
    TORCH_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  }
  // Complete on return, as core's contract says (and the buffers free again).
  TORCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void HostStaging::to_host(void* host_dst, const void* src, size_t bytes, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_buffers();
  auto* out = static_cast<char*>(host_dst);
  const auto* in = static_cast<const char*>(src);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto enqueue = [&](size_t chunk) {
    const size_t offset = chunk * kChunk;
    const int b = static_cast<int>(chunk % 2);
    TORCH_CUDA_CHECK(cudaMemcpyAsync(buffers_[b], in + offset, std::min(kChunk, bytes - offset),
                                     cudaMemcpyDeviceToHost, stream));
    TORCH_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  };
  // Keep one DMA in flight while the host drains the previous chunk.
  if (chunks > 0) {
    enqueue(0);
  }
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    if (chunk + 1 < chunks) {
      enqueue(chunk + 1);
    }
    const int b = static_cast<int>(chunk % 2);
    TORCH_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    const size_t offset = chunk * kChunk;
    std::memcpy(out + offset, buffers_[b], std::min(kChunk, bytes - offset));
  }
}

}  // namespace torch_cuda
