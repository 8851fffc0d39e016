#pragma once

#include <cstdint>

#include "c10/core/Device.h"

namespace c10 {

// Streams and events are owned by their backend and named by id within a
// device; core only passes the ids around. Stream 0 is each device's default.
using StreamId = int64_t;
using EventId = int64_t;

struct Stream {
  Device device;
  StreamId id;
  bool operator==(const Stream& other) const { return device == other.device && id == other.id; }
};

// The current stream of `device` for the calling thread (default: stream 0).
Stream current_stream(const Device& device);
void set_current_stream(const Stream& stream);

}  // namespace c10
