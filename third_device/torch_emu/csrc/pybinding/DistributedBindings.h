#pragma once

#include <pybind11/pybind11.h>

namespace torch_emu::python {

// The eccl backend's hooks into the emulated device (torch_emu.distributed).
void init_distributed_bindings(pybind11::module_& m);

}  // namespace torch_emu::python
