// torch_cuda._CUDAC: the CUDA backend's Python extension. Importing it
// registers the "cuda" device type with core.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "c10/core/DeviceRegistry.h"
#include "torch_cuda/csrc/aten/native/BinaryKernels.h"
#include "torch_cuda/csrc/distributed/Reduce.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/framework/CUDAStream.h"
#include "torch_cuda/csrc/jit/KernelSource.h"
#include "torch_cuda/csrc/profiler/NvtxRange.h"
#include "torch_cuda/csrc/pybinding/DistributedBindings.h"
#include "torch_cuda/csrc/pybinding/JitBindings.h"

namespace py = pybind11;

namespace {

c10::DeviceHooks& hooks() {
  return c10::DeviceRegistry::instance().hooks(torch_cuda::register_cuda_device_type());
}

torch_cuda::native::BinaryOp parse_binary_op(const std::string& name) {
  using torch_cuda::native::BinaryOp;
  if (name == "add") return BinaryOp::Add;
  if (name == "sub") return BinaryOp::Sub;
  if (name == "mul") return BinaryOp::Mul;
  if (name == "div") return BinaryOp::Div;
  if (name == "maximum") return BinaryOp::Maximum;
  if (name == "minimum") return BinaryOp::Minimum;
  throw std::invalid_argument("unknown binary op '" + name + "'");
}

}  // namespace

PYBIND11_MODULE(_CUDAC, m) {
  m.doc() = "torch_cuda's C++/CUDA runtime";
  torch_cuda::register_cuda_device_type();

  py::register_exception<torch_cuda::CudaError>(m, "CudaError", PyExc_RuntimeError);

  m.def("_is_available", [] { return hooks().is_available(); });
  m.def("_device_count", [] { return hooks().device_count(); });
  m.def("_unavailable_reason", [] { return hooks().unavailable_reason(); });
  m.def("_current_device", [] { return hooks().current_device(); });
  m.def("_set_device", [](int index) { hooks().set_device(static_cast<c10::DeviceIndex>(index)); });
  m.def("_synchronize", [](int index) { hooks().synchronize(static_cast<c10::DeviceIndex>(index)); });
  m.def("_runtime_version", &torch_cuda::runtime_version,
        "Version of the CUDA runtime linked in (e.g. 13000).");

  py::class_<torch_cuda::CudaStream, std::shared_ptr<torch_cuda::CudaStream>>(m, "_Stream")
      .def(py::init([](int device) {
             return std::make_shared<torch_cuda::CudaStream>(static_cast<c10::DeviceIndex>(device));
           }),
           py::arg("device"))
      .def_property_readonly("device", &torch_cuda::CudaStream::device)
      .def("query", &torch_cuda::CudaStream::query)
      .def("synchronize", &torch_cuda::CudaStream::synchronize,
           py::call_guard<py::gil_scoped_release>());

  m.def(
      "_binary_on_device",
      [](const std::string& op, const std::vector<float>& a, const std::vector<float>& b,
         int device) { return torch_cuda::native::binary_on_device(parse_binary_op(op), a, b, device); },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("device") = 0,
      py::call_guard<py::gil_scoped_release>());

  m.def("_parse_reduce_op", [](const std::string& name) {
    return static_cast<int>(torch_cuda::distributed::parse_reduce_op(name));
  });

  m.def("_elementwise_kernel_source", &torch_cuda::jit::elementwise_kernel_source, py::arg("name"),
        py::arg("num_inputs"), py::arg("expression"));

  m.def("_nvtx_push", &torch_cuda::profiler::push_range, py::arg("name"));
  m.def("_nvtx_pop", &torch_cuda::profiler::pop_range);
  m.def("_nvtx_depth", &torch_cuda::profiler::range_depth);

  torch_cuda::python::init_jit_bindings(m);
  torch_cuda::python::init_distributed_bindings(m);
}
