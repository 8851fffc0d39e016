// Devices, the registry, streams, events and memory statistics.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "c10/core/CachingAllocator.h"
#include "c10/core/Device.h"
#include "c10/core/DeviceGuard.h"
#include "c10/core/DeviceRegistry.h"
#include "c10/core/Stream.h"
#include "csrc/Bindings.h"

namespace py = pybind11;

namespace torch_core::python {
namespace {

c10::DeviceHooks& hooks_of(const c10::Device& device) {
  return c10::DeviceRegistry::instance().hooks(device.type());
}

// Owns a backend event; destroys it when Python drops the handle.
class EventHandle {
 public:
  explicit EventHandle(const c10::Device& device)
      : device_(device), id_(hooks_of(device).create_event(device.index(), c10::EventFlag::kTiming)) {}
  ~EventHandle() { hooks_of(device_).destroy_event(id_, device_.index()); }
  EventHandle(const EventHandle&) = delete;
  EventHandle& operator=(const EventHandle&) = delete;

  void record(c10::StreamId stream) { hooks_of(device_).record_event(id_, c10::Stream{device_, stream}); }
  bool query() { return hooks_of(device_).query_event(id_, device_.index()); }
  void synchronize() { hooks_of(device_).synchronize_event(id_, device_.index()); }
  void wait(c10::StreamId stream) { hooks_of(device_).stream_wait_event(c10::Stream{device_, stream}, id_); }
  double elapsed_time(const EventHandle& end) {
    if (end.device_ != device_) {
      throw std::invalid_argument("elapsed_time: events are on " + device_.str() + " and " + end.device_.str());
    }
    return hooks_of(device_).elapsed_ms(id_, end.id_, device_.index());
  }
  const c10::Device& device() const { return device_; }

 private:
  c10::Device device_;
  c10::EventId id_;
};

struct ScopedDeviceGuard {
  explicit ScopedDeviceGuard(const c10::Device& d) : device(d) {}
  c10::Device device;
  std::optional<c10::DeviceGuard> guard;
};

py::dict stats_dict(const c10::MemoryStats& s) {
  py::dict d;
  d["allocated_bytes"] = s.allocated;
  d["reserved_bytes"] = s.reserved;
  d["max_allocated_bytes"] = s.max_allocated;
  d["max_reserved_bytes"] = s.max_reserved;
  d["num_allocs"] = s.num_allocs;
  d["num_frees"] = s.num_frees;
  d["num_raw_allocs"] = s.num_raw_allocs;
  d["num_raw_frees"] = s.num_raw_frees;
  d["num_splits"] = s.num_splits;
  d["num_merges"] = s.num_merges;
  d["num_ooms"] = s.num_ooms;
  d["cached_blocks"] = s.cached_blocks;
  d["pending_frees"] = s.pending_frees;
  return d;
}

c10::CachingAllocator& allocator_of(const c10::Device& device) {
  if (!hooks_of(device).uses_caching_allocator()) {
    throw std::invalid_argument("device '" + device.str() + "' does not use the caching allocator");
  }
  return c10::CachingAllocator::for_device_type(device.type());
}

}  // namespace

void init_device_bindings(py::module_& m) {
  py::class_<c10::Device>(m, "Device")
      .def(py::init([](const std::string& text) { return c10::Device::parse(text); }), py::arg("device"))
      .def_property_readonly("type", &c10::Device::type_name)
      .def_property_readonly("index", &c10::Device::index)
      .def("__str__", &c10::Device::str)
      .def("__repr__",
           [](const c10::Device& d) {
             return "device(type='" + d.type_name() + "', index=" + std::to_string(d.index()) + ")";
           })
      .def("__eq__", [](const c10::Device& a, const c10::Device& b) { return a == b; })
      .def("__hash__", [](const c10::Device& d) { return std::hash<std::string>()(d.str()); });
  py::implicitly_convertible<py::str, c10::Device>();

  m.def("registered_device_types", [] { return c10::DeviceRegistry::instance().names(); },
        "Names of the device types registered in this process, 'cpu' first.");
  m.def("device_count", [](const std::string& type) { return hooks_of(c10::Device::parse(type)).device_count(); },
        py::arg("type"));
  m.def("is_available", [](const std::string& type) { return hooks_of(c10::Device::parse(type)).is_available(); },
        py::arg("type"));
  m.def("current_device", [](const std::string& type) { return hooks_of(c10::Device::parse(type)).current_device(); },
        py::arg("type"), "This thread's current device index of a device type.");
  m.def("set_device", [](const c10::Device& d) { hooks_of(d).set_device(d.index()); }, py::arg("device"));
  // `with torch_core.DeviceGuard("emu:1"):` -- the C++ guard lives exactly as
  // long as the block (Python's object may outlive it).
  py::class_<ScopedDeviceGuard>(m, "DeviceGuard")
      .def(py::init<const c10::Device&>(), py::arg("device"))
      .def("__enter__", [](ScopedDeviceGuard& g) -> ScopedDeviceGuard& {
        g.guard.emplace(g.device);
        return g;
      })
      .def("__exit__", [](ScopedDeviceGuard& g, py::args) { g.guard.reset(); });
  m.def("check_usable", [](const c10::Device& d) { c10::DeviceRegistry::instance().check_usable(d); },
        py::arg("device"), "Raises RuntimeError saying why a device cannot be used.");
  m.def("synchronize", [](const c10::Device& d) { hooks_of(d).synchronize(d.index()); }, py::arg("device"),
        py::call_guard<py::gil_scoped_release>());

  // Streams: ids within a device; 0 is the default stream.
  m.def("create_stream", [](const c10::Device& d) {
    c10::DeviceRegistry::instance().check_usable(d);
    return hooks_of(d).create_stream(d.index());
  });
  m.def("current_stream", [](const c10::Device& d) { return c10::current_stream(d).id; });
  m.def("set_current_stream", [](const c10::Device& d, c10::StreamId id) { c10::set_current_stream({d, id}); });
  m.def("query_stream", [](const c10::Device& d, c10::StreamId id) { return hooks_of(d).query_stream({d, id}); });
  m.def("synchronize_stream", [](const c10::Device& d, c10::StreamId id) { hooks_of(d).synchronize_stream({d, id}); },
        py::call_guard<py::gil_scoped_release>());

  py::class_<EventHandle, std::shared_ptr<EventHandle>>(m, "_Event")
      .def(py::init<const c10::Device&>(), py::arg("device"))
      .def_property_readonly("device", &EventHandle::device)
      .def("record", &EventHandle::record, py::arg("stream"))
      .def("query", &EventHandle::query)
      .def("synchronize", &EventHandle::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("wait", &EventHandle::wait, py::arg("stream"))
      .def("elapsed_time", &EventHandle::elapsed_time, py::arg("end"));

  m.def("memory_stats", [](const c10::Device& d) { return stats_dict(allocator_of(d).stats(d.index())); },
        py::arg("device"));
  m.def("empty_cache", [](const c10::Device& d) { allocator_of(d).empty_cache(d.index()); }, py::arg("device"));
  m.def("reset_peak_memory_stats", [](const c10::Device& d) { allocator_of(d).reset_peak_stats(d.index()); },
        py::arg("device"));
  m.def("allocation_granularity", [] { return c10::CachingAllocator::kRound; },
        "Bytes every allocation rounds up to.");
}

}  // namespace torch_core::python
