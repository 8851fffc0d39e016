// The profiler: start/stop, user ranges, events as Python dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "csrc/Bindings.h"
#include "csrc/profiler/Profiler.h"

namespace py = pybind11;

namespace torch_core::python {

void init_profiler_bindings(py::module_& m) {
  using torch_core::profiler::Profiler;
  m.def("_profiler_start", [](bool record_device) { Profiler::instance().start(record_device); },
        py::arg("record_device"));
  m.def("_profiler_active", [] { return Profiler::instance().active(); });
  m.def(
      "_profiler_stop",
      [] {
        std::vector<torch_core::profiler::ProfiledEvent> events;
        {
          py::gil_scoped_release release;  // waits for device marks
          events = Profiler::instance().stop();
        }
        py::list out;
        for (const auto& e : events) {
          py::dict d;
          d["name"] = e.name;
          d["kind"] = e.kind;
          d["input_shapes"] = e.input_shapes;
          d["device"] = e.device;
          d["stream"] = e.stream;
          d["thread"] = e.thread;
          d["host_start_ns"] = e.host_start_ns;
          d["host_end_ns"] = e.host_end_ns;
          d["device_start_ns"] = e.device_start_ns;
          d["device_end_ns"] = e.device_end_ns;
          d["correlation"] = e.correlation;
          out.append(d);
        }
        return out;
      },
      "Stops profiling; returns the events ordered by host start.");
  m.def("_push_range", [](const std::string& name) { Profiler::instance().push_user_range(name); });
  m.def("_pop_range", [] { Profiler::instance().pop_user_range(); });
  m.def("_host_now_ns", &torch_core::profiler::host_now_ns);
}

}  // namespace torch_core::python
