// torch_core._C._jit: the C++ half of torch_core.jit's fuser seam. Tracing,
// the IR, guards, code generation and the kernel cache are Python
// (torch_core/jit); this loads compiled kernels, registers them as dispatcher
// ops and launches them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "aten/Dispatcher.h"
#include "c10/core/Device.h"
#include "c10/core/DeviceRegistry.h"
#include "csrc/Bindings.h"
#include "csrc/jit/FusedLaunchers.h"
#include "csrc/jit/FusedOps.h"
#include "csrc/jit/KernelLibraries.h"

namespace py = pybind11;

namespace torch_core::python {
namespace {

c10::DeviceTypeId device_type_of(const std::string& type) {
  const c10::DeviceTypeId id = c10::DeviceRegistry::instance().find(type);
  if (id < 0) {
    throw std::invalid_argument("jit: no device type named '" + type + "' is registered");
  }
  return id;
}

}  // namespace

void init_jit_bindings(py::module_& m) {
  py::module_ jit = m.def_submodule("_jit", "Loading and launching fused kernels (torch_core.jit's C++ half)");
  jit.def(
      "has_host_launcher",
      [](const std::string& type) { return jit::FusedLaunchers::instance().has_launcher(device_type_of(type)); },
      py::arg("device_type"), "Whether a device type can run host-compiled fused kernels.");
  jit.def(
      "register_host_kernel",
      [](const std::string& name, const std::string& type, const std::string& path, const std::string& symbol) {
        const c10::DeviceTypeId id = device_type_of(type);
        jit::register_host_fused_kernel(name, id, jit::KernelLibraries::instance().load(path, symbol));
      },
      py::arg("name"), py::arg("device_type"), py::arg("path"), py::arg("symbol"),
      "Loads `symbol` from the shared object at `path` and registers it as dispatcher op `name` for a device type.");
  jit.def("has_kernel",
          [](const std::string& name, const std::string& type) {
            return at::Dispatcher::instance().has_kernel(name, device_type_of(type));
          },
          py::arg("name"), py::arg("device_type"));
  jit.def("launch", &jit::launch_fused, py::arg("name"), py::arg("inputs"), py::arg("out_shape"),
          py::call_guard<py::gil_scoped_release>(),
          "Dispatches fused op `name` once on the inputs' device and current stream; returns the result.");
}

}  // namespace torch_core::python
