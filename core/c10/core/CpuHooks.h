#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "c10/core/DeviceHooks.h"

namespace c10 {

// The host as a device: one device, always available. Work on the CPU runs
// synchronously, so every stream is always idle and an event completes when
// it is recorded.
class CpuHooks final : public DeviceHooks {
 public:
  bool is_available() const override { return true; }
  DeviceIndex device_count() const override { return 1; }
  DeviceIndex current_device() const override { return 0; }
  void set_device(DeviceIndex index) override;
  void synchronize(DeviceIndex) override {}
  std::string unavailable_reason() const override { return {}; }

  void* raw_allocate(size_t bytes, DeviceIndex index) override;
  void raw_free(void* ptr, DeviceIndex index) override;
  bool uses_caching_allocator() const override { return false; }

  void copy_from_host(void* dst, const void* host_src, size_t bytes, const Stream&) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes, const Stream&) override;
  bool copy_between_devices(void* dst, const Device&, const void* src, const Device&,
                            size_t bytes) override;

  StreamId create_stream(DeviceIndex index) override;
  bool query_stream(const Stream&) override { return true; }
  void synchronize_stream(const Stream&) override {}
  EventId create_event(DeviceIndex index, EventFlag flag) override;
  void destroy_event(EventId event, DeviceIndex index) override;
  void record_event(EventId event, const Stream& stream) override;
  bool query_event(EventId event, DeviceIndex index) override;
  void synchronize_event(EventId, DeviceIndex) override {}
  void stream_wait_event(const Stream&, EventId) override {}
  double elapsed_ms(EventId start, EventId end, DeviceIndex index) override;

 private:
  using Clock = std::chrono::steady_clock;
  std::atomic<StreamId> next_stream_{1};
  std::mutex mutex_;
  EventId next_event_ = 1;
  // Recorded events' times; an event created but not recorded has no entry.
  std::unordered_map<EventId, Clock::time_point> recorded_;
};

}  // namespace c10
