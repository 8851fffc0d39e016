#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "c10/core/Device.h"
#include "c10/core/Stream.h"

namespace c10 {

// Sync-only events of one device type, kept per device for reuse (PyTorch's
// caching allocator pools its events the same way). The allocator records
// one on every other stream a block was used on, at every such free: without
// a pool each of those would create and destroy a backend event.
//
// Only events known to have completed come back with release(); an event in
// an unknown state (a call on it failed) is discarded instead.
class EventPool {
 public:
  explicit EventPool(DeviceTypeId type) : type_(type) {}
  // Pooled events are not destroyed: like the allocator's cached segments,
  // they live as long as the process (the backend may be gone at exit).
  ~EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A pooled event of `index`, or a new sync-only one; throws what the backend throws.
  EventId acquire(DeviceIndex index);
  // Returns a completed event for reuse.
  void release(EventId event, DeviceIndex index);
  // Destroys an event whose state is unknown; never throws.
  void discard(EventId event, DeviceIndex index) noexcept;

 private:
  const DeviceTypeId type_;
  std::mutex mutex_;
  std::map<DeviceIndex, std::vector<EventId>> free_;
};

}  // namespace c10
