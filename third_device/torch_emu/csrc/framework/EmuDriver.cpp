#include "torch_emu/csrc/framework/EmuDriver.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace torch_emu {
namespace {

constexpr int kDefaultDevices = 2;
constexpr size_t kDefaultLimit = size_t{16} << 30;  // accounting only: memory is taken per allocation
constexpr uint64_t kOffsetMask = (uint64_t{1} << EmuDriver::kDeviceShift) - 1;

// Parses a non-negative integer environment variable; `error` explains a bad value.
bool env_number(const char* name, uint64_t fallback, uint64_t& out, std::string& error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    out = fallback;
    return true;
  }
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || text[0] == '-') {
    error = std::string(name) + "='" + text + "' is not a non-negative integer";
    return false;
  }
  out = value;
  return true;
}

}  // namespace

EmuDriver& EmuDriver::instance() {
  // Leaked on purpose: tensors freed during interpreter shutdown still call in.
  static auto* driver = new EmuDriver();
  return *driver;
}

EmuDriver::EmuDriver() {
  uint64_t count = 0;
  uint64_t limit = 0;
  uint64_t blocking = 0;
  if (!env_number("TORCH_EMU_DEVICES", kDefaultDevices, count, configuration_error_) ||
      !env_number("TORCH_EMU_MEMORY_LIMIT", kDefaultLimit, limit, configuration_error_) ||
      !env_number("TORCH_EMU_LAUNCH_BLOCKING", 0, blocking, configuration_error_)) {
    return;
  }
  if (blocking > 1) {
    configuration_error_ = "TORCH_EMU_LAUNCH_BLOCKING=" + std::to_string(blocking) + " is neither 0 nor 1";
    return;
  }
  launch_blocking_ = blocking == 1;
  if (count > 64) {
    configuration_error_ = "TORCH_EMU_DEVICES=" + std::to_string(count) + " is more than 64";
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    d->limit = limit;
    d->streams[0] = std::make_unique<EmuStream>();  // the default stream
    devices_.push_back(std::move(d));
  }
}

EmuDriver::Device& EmuDriver::device(int index) const {
  if (index < 0 || index >= device_count()) {
    throw std::out_of_range("emu:" + std::to_string(index) + " does not exist: there are " +
                            std::to_string(device_count()) + " emu device(s)");
  }
  return *devices_[index];
}

void* EmuDriver::malloc(int index, size_t bytes) {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.used + bytes > d.limit) {
    return nullptr;
  }
  const uint64_t offset = d.next_offset;
  d.next_offset += (bytes + 4095) / 4096 * 4096 + 4096;  // a guard gap between allocations
  if (d.next_offset > kOffsetMask) {
    throw std::runtime_error("emu:" + std::to_string(index) + " ran out of device address space");
  }
  d.heap.emplace(offset, Allocation{std::unique_ptr<char[]>(new char[bytes == 0 ? 1 : bytes]), bytes});
  d.used += bytes;
  return reinterpret_cast<void*>(kAddressTag | (static_cast<uint64_t>(index + 1) << kDeviceShift) | offset);
}

void EmuDriver::free(int index, void* ptr) {
  Device& d = device(index);
  const uint64_t offset = reinterpret_cast<uint64_t>(ptr) & kOffsetMask;
  // As cudaFree does: queued kernels no longer hold their operands, so memory
  // goes back to the heap only once the device's streams have drained.
  std::vector<EmuStream*> streams;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    for (auto& [id, s] : d.streams) {
      streams.push_back(s.get());
    }
  }
  for (EmuStream* s : streams) {
    s->wait_idle();
  }
  std::lock_guard<std::mutex> lock(d.mutex);
  const auto it = d.heap.find(offset);
  if (it == d.heap.end()) {
    throw std::invalid_argument("emu: free of an address that is not an allocation of emu:" +
                                std::to_string(index));
  }
  d.used -= it->second.size;
  d.heap.erase(it);
}

void EmuDriver::set_memory_limit(int index, size_t bytes) {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  d.limit = bytes;
}

size_t EmuDriver::memory_limit(int index) const {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.limit;
}

size_t EmuDriver::memory_used(int index) const {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.used;
}

bool EmuDriver::is_device_address(const void* ptr) {
  return (reinterpret_cast<uint64_t>(ptr) & kAddressTag) == kAddressTag;
}

char* EmuDriver::translate(const void* device_ptr) const {
  const uint64_t address = reinterpret_cast<uint64_t>(device_ptr);
  if (device_ptr == nullptr) {
    return nullptr;  // the storage of an empty tensor: kernels touch no element of it
  }
  if (!is_device_address(device_ptr)) {
    throw std::invalid_argument("emu: not a device address");
  }
  const int index = static_cast<int>(((address & ~kAddressTag) >> kDeviceShift) - 1);
  const uint64_t offset = address & kOffsetMask;
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.heap.upper_bound(offset);
  if (it == d.heap.begin()) {
    throw std::invalid_argument("emu: address is not inside an allocation");
  }
  --it;
  if (offset > it->first + it->second.size) {
    throw std::invalid_argument("emu: address is past the end of its allocation");
  }
  return it->second.memory.get() + (offset - it->first);
}

void EmuDriver::memcpy_htod(void* dst, const void* host_src, size_t bytes, const c10::Stream& stream) {
  EmuStream& s = this->stream(stream.device.index(), stream.id);
  s.enqueue([this, dst, host_src, bytes] { std::memcpy(translate(dst), host_src, bytes); });
  s.synchronize();  // the host buffer may go away once we return
}

void EmuDriver::memcpy_dtoh(void* host_dst, const void* src, size_t bytes, const c10::Stream& stream) {
  EmuStream& s = this->stream(stream.device.index(), stream.id);
  s.enqueue([this, host_dst, src, bytes] { std::memcpy(host_dst, translate(src), bytes); });
  s.synchronize();
}

void EmuDriver::memcpy_dtod(void* dst, const c10::Stream& dst_stream, const void* src,
                            const c10::Stream& src_stream, size_t bytes) {
  stream(src_stream.device.index(), src_stream.id).synchronize();
  EmuStream& s = stream(dst_stream.device.index(), dst_stream.id);
  s.enqueue([this, dst, src, bytes] { std::memcpy(translate(dst), translate(src), bytes); });
  s.synchronize();
}

void EmuDriver::launch(const c10::Stream& stream, std::function<void()> kernel) {
  EmuStream& s = this->stream(stream.device.index(), stream.id);
  s.enqueue(std::move(kernel));
  if (launch_blocking_) {
    s.synchronize();
  }
}

c10::StreamId EmuDriver::create_stream(int index) {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  const c10::StreamId id = d.next_stream++;
  d.streams[id] = std::make_unique<EmuStream>();
  return id;
}

EmuStream& EmuDriver::stream(int index, c10::StreamId id) {
  Device& d = device(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  const auto it = d.streams.find(id);
  if (it == d.streams.end()) {
    throw std::invalid_argument("emu:" + std::to_string(index) + " has no stream " + std::to_string(id));
  }
  return *it->second;  // streams are never destroyed, so the reference stays valid
}

void EmuDriver::synchronize_device(int index) {
  Device& d = device(index);
  std::vector<EmuStream*> streams;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    for (auto& [id, s] : d.streams) {
      streams.push_back(s.get());
    }
  }
  for (EmuStream* s : streams) {
    s->synchronize();
  }
}

c10::EventId EmuDriver::create_event() {
  std::lock_guard<std::mutex> lock(events_mutex_);
  events_[next_event_] = std::make_shared<Event>();
  return next_event_++;
}

void EmuDriver::destroy_event(c10::EventId id) {
  std::lock_guard<std::mutex> lock(events_mutex_);
  events_.erase(id);  // queued work holds its own reference
}

std::shared_ptr<EmuDriver::Event> EmuDriver::event(c10::EventId id) const {
  std::lock_guard<std::mutex> lock(events_mutex_);
  const auto it = events_.find(id);
  if (it == events_.end()) {
    throw std::invalid_argument("emu: no event " + std::to_string(id));
  }
  return it->second;
}

void EmuDriver::record_event(c10::EventId id, int index, c10::StreamId stream_id) {
  std::shared_ptr<Event> e = event(id);
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = ++e->recorded;
  }
  stream(index, stream_id).enqueue([e, generation] {
    std::lock_guard<std::mutex> lock(e->mutex);
    e->time = std::chrono::steady_clock::now();
    if (e->completed < generation) {
      e->completed = generation;
    }
    e->completed_cv.notify_all();
  });
}

bool EmuDriver::query_event(c10::EventId id) {
  std::shared_ptr<Event> e = event(id);
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->completed >= e->recorded;
}

void EmuDriver::synchronize_event(c10::EventId id) {
  std::shared_ptr<Event> e = event(id);
  std::unique_lock<std::mutex> lock(e->mutex);
  const uint64_t target = e->recorded;
  e->completed_cv.wait(lock, [&] { return e->completed >= target; });
}

void EmuDriver::stream_wait_event(int index, c10::StreamId stream_id, c10::EventId id) {
  std::shared_ptr<Event> e = event(id);
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    target = e->recorded;
  }
  if (target == 0) {
    return;  // waiting on a never-recorded event is a no-op, as in CUDA
  }
  stream(index, stream_id).enqueue([e, target] {
    std::unique_lock<std::mutex> lock(e->mutex);
    e->completed_cv.wait(lock, [&] { return e->completed >= target; });
  });
}

double EmuDriver::elapsed_ms(c10::EventId start, c10::EventId end) {
  std::shared_ptr<Event> a = event(start);
  std::shared_ptr<Event> b = event(end);
  std::chrono::steady_clock::time_point ta;
  std::chrono::steady_clock::time_point tb;
  {
    std::lock_guard<std::mutex> lock(a->mutex);
    if (a->recorded == 0 || a->completed < a->recorded) {
      throw std::runtime_error("elapsed_time: the start event has not completed");
    }
    ta = a->time;
  }
  {
    std::lock_guard<std::mutex> lock(b->mutex);
    if (b->recorded == 0 || b->completed < b->recorded) {
      throw std::runtime_error("elapsed_time: the end event has not completed");
    }
    tb = b->time;
  }
  return std::chrono::duration<double, std::milli>(tb - ta).count();
}

}  // namespace torch_emu
