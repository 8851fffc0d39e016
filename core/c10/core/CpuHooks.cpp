#include "c10/core/CpuHooks.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace c10 {
namespace {
// Wide enough for any SIMD load the kernels' loops may be vectorised to.
constexpr size_t kAlignment = 64;
}  // namespace

void CpuHooks::set_device(DeviceIndex index) {
  if (index != 0) {
    throw std::invalid_argument("device 'cpu' has only index 0");
  }
}

void* CpuHooks::raw_allocate(size_t bytes, DeviceIndex) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
}

void CpuHooks::raw_free(void* ptr, DeviceIndex) { std::free(ptr); }

void CpuHooks::copy_from_host(void* dst, const void* host_src, size_t bytes, const Stream&) {
  std::memcpy(dst, host_src, bytes);
}

void CpuHooks::copy_to_host(void* host_dst, const void* src, size_t bytes, const Stream&) {
  std::memcpy(host_dst, src, bytes);
}

bool CpuHooks::copy_between_devices(void* dst, const Device&, const void* src, const Device&,
                                    size_t bytes) {
  std::memcpy(dst, src, bytes);
  return true;
}

StreamId CpuHooks::create_stream(DeviceIndex) { return next_stream_++; }

EventId CpuHooks::create_event(DeviceIndex, EventFlag) {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_event_++;
}

void CpuHooks::destroy_event(EventId event, DeviceIndex) {
  std::lock_guard<std::mutex> lock(mutex_);
  recorded_.erase(event);
}

void CpuHooks::record_event(EventId event, const Stream&) {
  std::lock_guard<std::mutex> lock(mutex_);
  recorded_[event] = Clock::now();
}

bool CpuHooks::query_event(EventId event, DeviceIndex) {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_.count(event) != 0;
}

double CpuHooks::elapsed_ms(EventId start, EventId end, DeviceIndex) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto a = recorded_.find(start);
  const auto b = recorded_.find(end);
  if (a == recorded_.end() || b == recorded_.end()) {
    throw std::runtime_error("elapsed_time: both events must be recorded first");
  }
  return std::chrono::duration<double, std::milli>(b->second - a->second).count();
}

}  // namespace c10
