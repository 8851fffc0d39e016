#include "aten/Tensor.h"

#include <stdexcept>
#include <string>

#include "c10/core/CachingAllocator.h"
#include "c10/core/DeviceRegistry.h"
#include "c10/core/Stream.h"

namespace at {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) {
      throw std::invalid_argument("negative dimension " + std::to_string(s) + " in a shape");
    }
    n *= s;
  }
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  }
  return strides;
}

Tensor Tensor::empty(const Shape& shape, ScalarType dtype, const Device& device) {
  return empty(shape, dtype, c10::current_stream(device));
}

Tensor Tensor::empty(const Shape& shape, ScalarType dtype, const c10::Stream& stream) {
  const Device& device = stream.device;
  auto& registry = c10::DeviceRegistry::instance();
  if (!device.is_cpu()) {
    registry.check_usable(device);
  }
  Tensor t;
  t.impl_ = std::make_shared<Impl>(Impl{nullptr, shape, dtype, device, numel_of(shape), 0, false});
  const size_t bytes = t.nbytes();
  if (bytes == 0) {
    return t;
  }
  auto& hooks = registry.hooks(device.type());
  if (hooks.uses_caching_allocator()) {
    auto& allocator = c10::CachingAllocator::for_device_type(device.type());
    void* ptr = allocator.allocate(bytes, stream);
    t.impl_->allocation_stream = stream.id;
    t.impl_->cached = true;
    t.impl_->data = std::shared_ptr<void>(ptr, [&allocator](void* p) { allocator.free(p); });
  } else {
    const c10::DeviceIndex index = device.index();
    void* ptr = hooks.raw_allocate(bytes, index);
    if (ptr == nullptr) {
      throw c10::OutOfMemoryError(device.str() + " is out of memory: tried to allocate " +
                                  std::to_string(bytes) + " bytes");
    }
    t.impl_->data = std::shared_ptr<void>(ptr, [&hooks, index](void* p) { hooks.raw_free(p, index); });
  }
  return t;
}

void Tensor::record_stream(const c10::Stream& stream) const {
  if (!defined() || !impl_->cached || impl_->data == nullptr) {
    return;
  }
  if (stream.device == impl_->device && stream.id == impl_->allocation_stream) {
    return;
  }
  c10::CachingAllocator::for_device_type(impl_->device.type()).record_stream(impl_->data.get(), stream);
}

Tensor Tensor::borrowed() const {
  if (!defined()) {
    return *this;
  }
  Tensor t;
  t.impl_ = std::make_shared<Impl>(*impl_);
  // Aliasing constructor with an empty owner: same address, no ownership.
  t.impl_->data = std::shared_ptr<void>(std::shared_ptr<void>(), impl_->data.get());
  t.impl_->cached = false;  // nothing to record on: the owner did that
  return t;
}

}  // namespace at
