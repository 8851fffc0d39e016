#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "c10/core/Device.h"
#include "c10/core/ScalarType.h"
#include "c10/core/Stream.h"

namespace at {

using c10::Device;
using c10::ScalarType;
using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);

// A dense, contiguous, row-major tensor. Its storage belongs to its device and
// comes from that device's allocator (core's caching allocator for
// accelerators); it is freed when the last Tensor sharing it goes away. A
// launcher need not keep operands alive until its kernel runs: the caching
// allocator reuses a freed block only after the work queued on its
// allocation stream, and on every stream recorded with record_stream, has
// passed (the dispatcher records a kernel's stream for each operand).
class Tensor {
 public:
  Tensor() = default;

  // Uninitialised memory on `device`, allocated on its current stream.
  static Tensor empty(const Shape& shape, ScalarType dtype, const Device& device);
  // Uninitialised memory on stream.device, allocated on `stream` (a kernel's
  // scratch buffer belongs to the stream the kernel runs on).
  static Tensor empty(const Shape& shape, ScalarType dtype, const c10::Stream& stream);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  Shape strides() const { return contiguous_strides(impl_->shape); }
  int64_t dim() const { return static_cast<int64_t>(impl_->shape.size()); }
  int64_t numel() const { return impl_->numel; }
  ScalarType dtype() const { return impl_->dtype; }
  const Device& device() const { return impl_->device; }
  size_t nbytes() const { return static_cast<size_t>(impl_->numel) * c10::itemsize(impl_->dtype); }
  // An address in the device's address space: host-readable only for the CPU.
  void* data_ptr() const { return impl_->data.get(); }
  // The stream the storage was allocated on (its pool in the caching allocator).
  c10::StreamId allocation_stream() const { return impl_->allocation_stream; }

  // Work queued on `stream` uses this tensor: when the storage is freed, its
  // block is reused only after that work. A no-op for the allocation stream,
  // for empty tensors and for memory outside the caching allocator.
  void record_stream(const c10::Stream& stream) const;

  // The same tensor without ownership of its storage: what a launcher keeps
  // in a queued kernel, since stream-aware frees (not the queued closure)
  // keep the block from being reused before the kernel has run.
  Tensor borrowed() const;

 private:
  struct Impl {
    std::shared_ptr<void> data;
    Shape shape;
    ScalarType dtype;
    Device device;
    int64_t numel;
    c10::StreamId allocation_stream = 0;
    bool cached = false;  // storage comes from core's caching allocator
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace at
