// torch_core._C: the Python face of core's C++ runtime.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "c10/core/Device.h"
#include "c10/core/DeviceRegistry.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_core's C++ runtime: device registry and devices";

  py::class_<c10::Device>(m, "Device")
      .def(py::init([](const std::string& text) { return c10::Device::parse(text); }),
           py::arg("device"))
      .def_property_readonly("type", &c10::Device::type_name)
      .def_property_readonly("index", &c10::Device::index)
      .def("__str__", &c10::Device::str)
      .def("__repr__", [](const c10::Device& d) { return "device(type='" + d.type_name() +
                                                      "', index=" + std::to_string(d.index()) + ")"; })
      .def("__eq__", [](const c10::Device& a, const c10::Device& b) { return a == b; })
      .def("__hash__", [](const c10::Device& d) { return std::hash<std::string>()(d.str()); });

  m.def("registered_device_types", [] { return c10::DeviceRegistry::instance().names(); },
        "Names of the device types registered in this process, 'cpu' first.");
  m.def(
      "device_count",
      [](const std::string& type) {
        auto& registry = c10::DeviceRegistry::instance();
        const auto id = c10::Device::parse(type).type();
        return registry.hooks(id).device_count();
      },
      py::arg("type"));
  m.def(
      "check_usable",
      [](const std::string& text) {
        c10::DeviceRegistry::instance().check_usable(c10::Device::parse(text));
      },
      py::arg("device"), "Raises RuntimeError saying why a device cannot be used.");
}
