#pragma once

#include <pybind11/pybind11.h>

namespace torch_core::python {

// Each part of torch_core._C binds itself; Module.cpp calls them in order.
void init_cpu_bindings(pybind11::module_& m);
void init_device_bindings(pybind11::module_& m);
void init_tensor_bindings(pybind11::module_& m);
void init_profiler_bindings(pybind11::module_& m);
void init_jit_bindings(pybind11::module_& m);

}  // namespace torch_core::python
