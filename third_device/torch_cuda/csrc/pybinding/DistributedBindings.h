#pragma once

#include <pybind11/pybind11.h>

namespace torch_cuda::python {

// torch_cuda.distributed's C++ side: NCCL (load, version, unique ids) and
// communicators that queue collectives on the tensors' streams.
void init_distributed_bindings(pybind11::module_& m);

}  // namespace torch_cuda::python
