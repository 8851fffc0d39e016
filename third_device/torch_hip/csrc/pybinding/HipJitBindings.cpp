// torch_hip.jit's C++ side, in place of torch_cuda's JitBindings.cpp (not
// translated): that file binds NVRTC and the fused-kernel launcher, which
// loads modules through the CUDA driver's entry points
// (cudaGetDriverEntryPointByVersion, no HIP equivalent). torch_hip registers
// no fuser; fused graphs run eagerly. hiprtc (in libamdhip64) is the way to one.
#include "torch_hip/csrc/pybinding/JitBindings.h"

namespace torch_hip::python {

void init_jit_bindings(pybind11::module_& m) {
  m.attr("_FUSER_UNAVAILABLE") =
      "torch_hip registers no fuser: the CUDA backend's compiles with NVRTC and loads kernels through the "
      "CUDA driver's entry points, which HIP lacks; a hiprtc fuser is not written yet, so fused graphs run "
      "eagerly";
}

}  // namespace torch_hip::python
