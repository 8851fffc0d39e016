#pragma once

#include <pybind11/pybind11.h>

namespace torch_cuda::python {

// torch_cuda.jit's C++ side: NVRTC (load, version, compile) and the
// registration of compiled fused kernels with the dispatcher.
void init_jit_bindings(pybind11::module_& m);

}  // namespace torch_cuda::python
