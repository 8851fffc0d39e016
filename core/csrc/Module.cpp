// torch_core._C: the Python face of core's C++ runtime.
#include <pybind11/pybind11.h>

#include "aten/Dispatcher.h"
#include "c10/core/CachingAllocator.h"
#include "csrc/Bindings.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_core's C++ runtime: devices, streams, memory, tensors and ops";

  // C++ errors users can act on, as the Python exceptions they expect.
  static py::exception<c10::OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const at::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const c10::OutOfMemoryError& e) {
      PyErr_SetString(oom.ptr(), e.what());
    }
  });

  torch_core::python::init_device_bindings(m);
  torch_core::python::init_tensor_bindings(m);
  torch_core::python::init_profiler_bindings(m);
  torch_core::python::init_cpu_bindings(m);
  torch_core::python::init_jit_bindings(m);
}
