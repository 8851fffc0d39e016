// A test-only device backend whose faults the test scripts: "faulty", one
// device of host memory with a capacity, streams the test holds busy and
// finishes by hand, and backend calls that fail on request. It drives core's
// caching allocator through the paths a real device reaches only under
// faults (tests/core/test_allocator_faults.py): an event query that throws,
// running out of memory while frees wait for other streams, a record on a
// stream that does not exist. Nothing runs asynchronously: "busy" is a flag.
#include <pybind11/pybind11.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"

namespace py = pybind11;

namespace {

class FaultyHooks final : public c10::DeviceHooks {
 public:
  struct Counters {
    int64_t timing_events = 0;     // created with EventFlag::kTiming
    int64_t sync_only_events = 0;  // created with EventFlag::kSyncOnly
    int64_t destroyed_events = 0;
    int64_t event_synchronizations = 0;
    int64_t injected_failures = 0;
  };

  bool is_available() const override { return true; }
  c10::DeviceIndex device_count() const override { return 1; }
  c10::DeviceIndex current_device() const override { return 0; }
  void set_device(c10::DeviceIndex) override {}
  void synchronize(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [id, busy] : busy_) {
      finish_locked(id);
    }
  }
  std::string unavailable_reason() const override { return {}; }

  void* raw_allocate(size_t bytes, c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (used_ + bytes > capacity_) {
      return nullptr;
    }
    void* ptr = std::malloc(bytes);
    if (ptr == nullptr) {
      throw std::bad_alloc();
    }
    used_ += bytes;
    sizes_[ptr] = bytes;
    return ptr;
  }
  void raw_free(void* ptr, c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= sizes_.at(ptr);
    sizes_.erase(ptr);
    std::free(ptr);
  }

  void copy_from_host(void*, const void*, size_t, const c10::Stream&) override { unsupported("copy"); }
  void copy_to_host(void*, const void*, size_t, const c10::Stream&) override { unsupported("copy"); }
  bool copy_between_devices(void*, const c10::Device&, const void*, const c10::Device&, size_t) override {
    return false;
  }

  c10::StreamId create_stream(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_[next_stream_] = false;
    return next_stream_++;
  }
  bool query_stream(const c10::Stream& stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return !busy_.at(check_stream_locked(stream));
  }
  void synchronize_stream(const c10::Stream& stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_locked(check_stream_locked(stream));
  }

  c10::EventId create_event(c10::DeviceIndex, c10::EventFlag flag) override {
    std::lock_guard<std::mutex> lock(mutex_);
    (flag == c10::EventFlag::kSyncOnly ? counters_.sync_only_events : counters_.timing_events)++;
    events_[next_event_] = Event{};
    return next_event_++;
  }
  void destroy_event(c10::EventId event, c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (events_.erase(event) != 0) {
      counters_.destroyed_events++;
    }
  }
  void record_event(c10::EventId event, const c10::Stream& stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    inject_locked("record_event");
    const c10::StreamId id = check_stream_locked(stream);
    Event& e = event_locked(event);
    e.stream = id;
    e.completed = !busy_.at(id);
  }
  bool query_event(c10::EventId event, c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    inject_locked("query_event");
    return event_locked(event).completed;
  }
  void synchronize_event(c10::EventId event, c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mutex_);
    inject_locked("synchronize_event");
    Event& e = event_locked(event);
    counters_.event_synchronizations++;
    if (!e.completed) {
      finish_locked(e.stream);  // waiting for the event: its stream gets there
    }
  }
  void stream_wait_event(const c10::Stream&, c10::EventId) override {}
  double elapsed_ms(c10::EventId, c10::EventId, c10::DeviceIndex) override { return 0.0; }

  // -- what the tests script ----------------------------------------------------
  void hold(c10::StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_.at(stream) = true;
  }
  void finish(c10::StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_locked(stream);
  }
  void set_capacity(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
  }
  void fail(const std::string& call, int times, int after) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = faults_.find(call);
    if (it == faults_.end()) {
      throw std::invalid_argument("faulty: cannot fail " + call);
    }
    it->second = Fault{after, times};
  }
  Counters counters() {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
  }
  size_t live_events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }

 private:
  struct Event {
    c10::StreamId stream = 0;
    bool completed = true;  // never recorded: complete, as in CUDA
  };

  static void unsupported(const char* what) { throw std::runtime_error(std::string("faulty: no ") + what); }

  c10::StreamId check_stream_locked(const c10::Stream& stream) const {
    if (stream.device.index() != 0 || busy_.count(stream.id) == 0) {
      throw std::invalid_argument(stream.device.str() + " has no stream " + std::to_string(stream.id));
    }
    return stream.id;
  }
  Event& event_locked(c10::EventId event) {
    const auto it = events_.find(event);
    if (it == events_.end()) {
      throw std::invalid_argument("no faulty event " + std::to_string(event));
    }
    return it->second;
  }
  void finish_locked(c10::StreamId stream) {
    busy_.at(stream) = false;
    for (auto& [id, e] : events_) {
      if (e.stream == stream) {
        e.completed = true;
      }
    }
  }
  // Succeeds `after` more times, then fails `times` times.
  struct Fault {
    int after = 0;
    int times = 0;
  };
  void inject_locked(const std::string& call) {
    Fault& f = faults_.at(call);
    if (f.after > 0) {
      f.after--;
      return;
    }
    if (f.times > 0) {
      f.times--;
      counters_.injected_failures++;
      throw std::runtime_error("faulty: injected " + call + " failure");
    }
  }

  std::mutex mutex_;
  size_t capacity_ = size_t{1} << 40;
  size_t used_ = 0;
  std::map<void*, size_t> sizes_;
  std::map<c10::StreamId, bool> busy_{{0, false}};  // stream -> held by the test
  c10::StreamId next_stream_ = 1;
  std::map<c10::EventId, Event> events_;
  c10::EventId next_event_ = 1;
  std::map<std::string, Fault> faults_{{"query_event", {}}, {"record_event", {}}, {"synchronize_event", {}}};
  Counters counters_;
};

FaultyHooks& hooks() {
  static const c10::DeviceTypeId id = [] {
    c10::RegistrationSite site("_faulty_device");
    return c10::DeviceRegistry::instance().register_device_type("faulty", std::make_unique<FaultyHooks>());
  }();
  return static_cast<FaultyHooks&>(c10::DeviceRegistry::instance().hooks(id));
}

}  // namespace

PYBIND11_MODULE(_faulty_device, m) {
  hooks();  // registers "faulty"
  m.def("_hold", [](int64_t stream) { hooks().hold(stream); }, py::arg("stream"),
        "Makes the stream busy: events recorded on it do not complete until _finish.");
  m.def("_finish", [](int64_t stream) { hooks().finish(stream); }, py::arg("stream"));
  m.def("_set_capacity", [](size_t bytes) { hooks().set_capacity(bytes); }, py::arg("bytes"),
        "raw_allocate returns nullptr (out of memory) past this many bytes in use.");
  m.def("_fail", [](const std::string& call, int times, int after) { hooks().fail(call, times, after); },
        py::arg("call"), py::arg("times") = 1, py::arg("after") = 0,
        "After `after` more successful calls, the next `times` calls of query_event, record_event or "
        "synchronize_event throw.");
  m.def("_live_events", [] { return hooks().live_events(); });
  m.def("_counters", [] {
    const FaultyHooks::Counters c = hooks().counters();
    py::dict d;
    d["timing_events"] = c.timing_events;
    d["sync_only_events"] = c.sync_only_events;
    d["destroyed_events"] = c.destroyed_events;
    d["event_synchronizations"] = c.event_synchronizations;
    d["injected_failures"] = c.injected_failures;
    return d;
  });
}
