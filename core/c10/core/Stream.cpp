#include "c10/core/Stream.h"

#include <map>
#include <utility>

namespace c10 {
namespace {

// Per thread, as in PyTorch: a stream context on one thread does not move
// another thread's work.
std::map<std::pair<DeviceTypeId, DeviceIndex>, StreamId>& current_streams() {
  thread_local std::map<std::pair<DeviceTypeId, DeviceIndex>, StreamId> streams;
  return streams;
}

}  // namespace

Stream current_stream(const Device& device) {
  auto& streams = current_streams();
  const auto it = streams.find({device.type(), device.index()});
  return Stream{device, it == streams.end() ? 0 : it->second};
}

void set_current_stream(const Stream& stream) {
  current_streams()[{stream.device.type(), stream.device.index()}] = stream.id;
}

}  // namespace c10
