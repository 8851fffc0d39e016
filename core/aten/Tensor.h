#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "c10/core/Device.h"
#include "c10/core/ScalarType.h"

namespace at {

using c10::Device;
using c10::ScalarType;
using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);

// A dense, contiguous, row-major tensor. Its storage belongs to its device and
// comes from that device's allocator (core's caching allocator for
// accelerators); it is freed when the last Tensor sharing it goes away, so a
// kernel queued on a stream keeps its operands alive by holding copies.
class Tensor {
 public:
  Tensor() = default;

  // Uninitialised memory on `device`, allocated on its current stream.
  static Tensor empty(const Shape& shape, ScalarType dtype, const Device& device);

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

 private:
  struct Impl {
    std::shared_ptr<void> data;
    Shape shape;
    ScalarType dtype;
    Device device;
    int64_t numel;
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace at
