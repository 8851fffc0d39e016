#pragma once

#include <cstddef>
#include <string>

#include "c10/core/Device.h"
#include "c10/core/Stream.h"

namespace c10 {

// What an event is for, chosen when it is created. Timing events can measure
// elapsed_ms; sync-only ones only order and wait, which lets a backend skip
// the timestamp (PyTorch's EventFlag; core's own events, e.g. the caching
// allocator's stream-aware frees, are sync-only).
enum class EventFlag {
  kTiming,
  kSyncOnly,
};

// Everything core needs from a device backend, registered in one call
// (DeviceRegistry::register_device_type). A backend implements only the
// hardware calls; core builds the generic parts on top: the caching
// allocator, current streams, tensors, dispatch.
class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;

  // -- runtime ---------------------------------------------------------------
  // Whether the runtime initialised and found at least one device.
  virtual bool is_available() const = 0;
  virtual DeviceIndex device_count() const = 0;
  virtual DeviceIndex current_device() const = 0;
  virtual void set_device(DeviceIndex index) = 0;
  // Waits for all work on every stream of the device.
  virtual void synchronize(DeviceIndex index) = 0;
  // Why the device cannot be used (empty when it can), shown in errors.
  virtual std::string unavailable_reason() const = 0;

  // -- memory: raw calls under core's caching allocator ---------------------
  // Returns nullptr when the device is out of memory (core then frees its
  // cache and retries before reporting); throws for other failures.
  virtual void* raw_allocate(size_t bytes, DeviceIndex index) = 0;
  virtual void raw_free(void* ptr, DeviceIndex index) = 0;
  // Whether tensors of this device type go through the caching allocator.
  virtual bool uses_caching_allocator() const { return true; }

  // -- copies, ordered on `stream` and complete when they return --------------
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes, const Stream& stream) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes, const Stream& stream) = 0;
  // Between two devices of this type; false when unsupported (core then
  // stages through host memory).
  virtual bool copy_between_devices(void* dst, const Device& dst_device, const void* src,
                                    const Device& src_device, size_t bytes) = 0;

  // -- streams and events -------------------------------------------------------
  virtual StreamId create_stream(DeviceIndex index) = 0;
  virtual bool query_stream(const Stream& stream) = 0;
  virtual void synchronize_stream(const Stream& stream) = 0;
  virtual EventId create_event(DeviceIndex index, EventFlag flag) = 0;
  virtual void destroy_event(EventId event, DeviceIndex index) = 0;
  virtual void record_event(EventId event, const Stream& stream) = 0;
  virtual bool query_event(EventId event, DeviceIndex index) = 0;
  virtual void synchronize_event(EventId event, DeviceIndex index) = 0;
  // Later work on `stream` waits until `event` has completed.
  virtual void stream_wait_event(const Stream& stream, EventId event) = 0;
  // Milliseconds between two recorded, completed events.
  virtual double elapsed_ms(EventId start, EventId end, DeviceIndex index) = 0;
};

}  // namespace c10
