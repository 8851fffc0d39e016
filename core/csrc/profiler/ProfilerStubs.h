#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "c10/core/Device.h"
#include "c10/core/Stream.h"

namespace torch_core::profiler {

// A point queued on a device stream; the device fills in when it got there.
class DeviceMark {
 public:
  virtual ~DeviceMark() = default;
  // Nanoseconds on the host's steady clock at which the stream reached the
  // mark; waits until it has. A backend whose device has its own clock
  // converts here (e.g. by timing against an event recorded at a known host time).
  virtual int64_t time_ns() = 0;
};

// What the profiler needs from a device type (PyTorch calls these the
// profiler stubs). Registered per device type; a device without stubs is
// profiled on the host side only.
class ProfilerStubs {
 public:
  virtual ~ProfilerStubs() = default;
  // The mark starting an op's interval.
  virtual std::shared_ptr<DeviceMark> mark(const c10::Stream& stream) = 0;
  // The mark ending the interval `start` began. A backend that converts
  // device time through a reference it renews now and then must convert both
  // ends through the same one, or a short interval can end before it starts.
  virtual std::shared_ptr<DeviceMark> end_mark(const c10::Stream& stream, const DeviceMark& start) {
    (void)start;
    return mark(stream);
  }
  // User ranges (record_function), e.g. for the vendor's own timeline tool.
  virtual void range_push(const std::string& name) { (void)name; }
  virtual void range_pop() {}
};

// The registry of stubs by device type (one per type; registering twice throws).
void register_profiler_stubs(c10::DeviceTypeId type, std::unique_ptr<ProfilerStubs> stubs);
ProfilerStubs* profiler_stubs(c10::DeviceTypeId type);
void for_each_profiler_stubs(const std::function<void(ProfilerStubs&)>& fn);

}  // namespace torch_core::profiler
