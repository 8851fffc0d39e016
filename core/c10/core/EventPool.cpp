#include "c10/core/EventPool.h"

#include "c10/core/DeviceRegistry.h"

namespace c10 {

EventId EventPool::acquire(DeviceIndex index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& events = free_[index];
    if (!events.empty()) {
      const EventId event = events.back();
      events.pop_back();
      return event;
    }
  }
  // Outside the lock: creating an event is a backend call.
  return DeviceRegistry::instance().hooks(type_).create_event(index, EventFlag::kSyncOnly);
}

void EventPool::release(EventId event, DeviceIndex index) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_[index].push_back(event);
}

void EventPool::discard(EventId event, DeviceIndex index) noexcept {
  try {
    DeviceRegistry::instance().hooks(type_).destroy_event(event, index);
  } catch (...) {
    // The backend could not even destroy it: nothing else can be done with the id.
  }
}

}  // namespace c10
