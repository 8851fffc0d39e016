#include "torch_cuda/csrc/pybinding/JitBindings.h"

#include <pybind11/stl.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/jit/FusedKernels.h"
#include "torch_cuda/csrc/jit/KernelSource.h"
#include "torch_cuda/csrc/jit/Nvrtc.h"

namespace py = pybind11;

namespace torch_cuda::python {

void init_jit_bindings(py::module_& m) {
  py::register_exception<jit::NvrtcError>(m, "NvrtcError", PyExc_RuntimeError);

  m.def("_nvrtc_headers_available", &jit::nvrtc_headers_available,
        "Whether torch_cuda was built with the nvidia-cuda-nvrtc wheel's nvrtc.h.");
  m.def("_nvrtc_load", &jit::load_nvrtc, py::arg("library"), py::arg("preload"));
  m.def("_nvrtc_loaded", &jit::nvrtc_loaded);
  m.def("_nvrtc_version", &jit::nvrtc_version);
  m.def("_nvrtc_supported_archs", &jit::nvrtc_supported_archs);
  m.def(
      "_nvrtc_compile",
      [](const std::string& source, const std::string& name,
         const std::vector<std::pair<std::string, std::string>>& headers, const std::vector<std::string>& options) {
        jit::NvrtcOutput out;
        {
          py::gil_scoped_release release;
          out = jit::nvrtc_compile(source, name, headers, options);
        }
        return py::make_tuple(py::bytes(out.ptx), py::bytes(out.cubin), out.log);
      },
      py::arg("source"), py::arg("name"), py::arg("headers"), py::arg("options"),
      "Compiles CUDA C++ with NVRTC: (ptx, cubin or b'', log); NvrtcError carries the log.");

  m.def(
      "_jit_register_kernel",
      [](const std::string& name, const std::map<int, py::bytes>& images, bool reduction, int num_inputs) {
        std::map<int, std::string> owned;
        for (const auto& [arch, image] : images) {
          owned.emplace(arch, std::string(image));
        }
        jit::register_nvrtc_kernel(register_cuda_device_type(), name, std::move(owned), reduction, num_inputs);
      },
      py::arg("name"), py::arg("images"), py::arg("reduction"), py::arg("num_inputs"),
      "Registers an NVRTC-compiled kernel (arch -> cubin/PTX) as dispatcher op `name` for cuda.");
  m.def("_device_arch", &jit::device_arch, py::arg("device"), "major * 10 + minor of a CUDA device.");
  m.attr("_JIT_ELEMENTWISE_BLOCK") = jit::kElementwiseBlock;
  m.attr("_JIT_REDUCTION_BLOCK") = jit::kReductionBlock;
}

}  // namespace torch_cuda::python
