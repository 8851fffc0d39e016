// torch_core._C: the Python face of core's C++ runtime.
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "aten/Dispatcher.h"
#include "c10/core/CachingAllocator.h"
#include "c10/core/Warning.h"
#include "csrc/Bindings.h"

namespace py = pybind11;

namespace {

// Core's warnings as Python RuntimeWarnings, on threads that hold the GIL.
// Others (a backend's stream workers freeing tensors) never wait for the GIL,
// which could deadlock: throwing makes c10::warn print to stderr instead.
void python_warning(const std::string& message) {
  if (Py_IsInitialized() == 0 || PyGILState_Check() == 0) {
    throw std::runtime_error("not a Python thread");
  }
  // A free may run while an exception is being raised: keep it.
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  const int failed = PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1);
  if (failed != 0) {
    PyErr_Clear();  // filtered into an error: it cannot propagate through C++ frees
  }
  PyErr_Restore(type, value, trace);
  if (failed != 0) {
    throw std::runtime_error("the warning was filtered into an error");
  }
}

}  // namespace

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

  c10::set_warning_handler(python_warning);

  torch_core::python::init_device_bindings(m);
  torch_core::python::init_tensor_bindings(m);
  torch_core::python::init_profiler_bindings(m);
  torch_core::python::init_cpu_bindings(m);
  torch_core::python::init_jit_bindings(m);
}
