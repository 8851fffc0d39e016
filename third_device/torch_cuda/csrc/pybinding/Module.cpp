// torch_cuda._CUDAC: the CUDA backend's Python extension. Importing it
// registers the "cuda" device type, its kernels and its profiler stubs with
// core. Tensors, streams, events and memory statistics then go through
// torch_core's generic API; this module adds what is CUDA's own.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"
#include "csrc/profiler/ProfilerStubs.h"
#include "torch_cuda/csrc/aten/CUDAKernels.h"
#include "torch_cuda/csrc/aten/native/Launchers.h"
#include "torch_cuda/csrc/distributed/Reduce.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/framework/DeviceProperties.h"
#include "torch_cuda/csrc/framework/DeviceScope.h"
#include "torch_cuda/csrc/jit/KernelSource.h"
#include "torch_cuda/csrc/profiler/CUDAProfilerStubs.h"
#include "torch_cuda/csrc/profiler/NvtxRange.h"
#include "torch_cuda/csrc/pybinding/DistributedBindings.h"
#include "torch_cuda/csrc/pybinding/JitBindings.h"

namespace py = pybind11;

namespace {

c10::DeviceHooks& hooks() {
  return c10::DeviceRegistry::instance().hooks(torch_cuda::register_cuda_device_type());
}

}  // namespace

PYBIND11_MODULE(_CUDAC, m) {
  m.doc() = "torch_cuda's C++/CUDA runtime";
  static const c10::DeviceTypeId cuda = [] {
    c10::RegistrationSite site("torch_cuda");
    const c10::DeviceTypeId id = torch_cuda::register_cuda_device_type();
    torch_cuda::register_cuda_kernels(id);
    torch_cuda::register_cuda_profiler(id);
    return id;
  }();
  m.attr("device_type_id") = cuda;

  py::register_exception<torch_cuda::CudaError>(m, "CudaError", PyExc_RuntimeError);

  m.def("_is_available", [] { return hooks().is_available(); });
  m.def("_device_count", [] { return hooks().device_count(); });
  m.def("_unavailable_reason", [] { return hooks().unavailable_reason(); });
  m.def("_current_device", [] { return hooks().current_device(); });
  m.def("_set_device", [](int index) { hooks().set_device(static_cast<c10::DeviceIndex>(index)); });
  m.def("_synchronize", [](int index) { hooks().synchronize(static_cast<c10::DeviceIndex>(index)); });
  m.def("_runtime_version", &torch_cuda::runtime_version,
        "Version of the CUDA runtime linked in (e.g. 13000).");
  m.def("_driver_version", &torch_cuda::driver_version,
        "Newest CUDA runtime version the driver supports (e.g. 13000); 0 without a driver.");
  m.def("_runtime_library", &torch_cuda::runtime_library,
        "The libcudart file loaded (found through _CUDAC's RUNPATH); empty when linked statically.");

  py::class_<torch_cuda::DeviceProperties>(m, "_DeviceProperties")
      .def_readonly("name", &torch_cuda::DeviceProperties::name)
      .def_readonly("major", &torch_cuda::DeviceProperties::major)
      .def_readonly("minor", &torch_cuda::DeviceProperties::minor)
      .def_readonly("total_memory", &torch_cuda::DeviceProperties::total_memory)
      .def_readonly("multi_processor_count", &torch_cuda::DeviceProperties::multi_processor_count)
      .def_readonly("warp_size", &torch_cuda::DeviceProperties::warp_size)
      .def_readonly("shared_memory_per_block", &torch_cuda::DeviceProperties::shared_memory_per_block)
      .def_readonly("max_threads_per_block", &torch_cuda::DeviceProperties::max_threads_per_block)
      .def("__repr__", [](const torch_cuda::DeviceProperties& p) {
        return "_CudaDeviceProperties(name='" + p.name + "', major=" + std::to_string(p.major) +
               ", minor=" + std::to_string(p.minor) + ", total_memory=" +
               std::to_string(p.total_memory / (1024 * 1024)) + "MB, multi_processor_count=" +
               std::to_string(p.multi_processor_count) + ")";
      });
  m.def("_device_properties", [](int index) { return torch_cuda::device_properties(static_cast<c10::DeviceIndex>(index)); },
        py::arg("device"));
  m.def("_has_profiler_stubs", [] { return torch_core::profiler::profiler_stubs(cuda) != nullptr; },
        "Whether core's profiler has CUDA's stubs (device-side kernel timing).");
  m.def(
      "_sleep",
      [](int64_t cycles, int device, int64_t stream) {
        const c10::Stream s{c10::Device(cuda, static_cast<c10::DeviceIndex>(device)), stream};
        auto& hooks = torch_cuda::cuda_hooks();
        hooks.require_device(s.device.index());
        const torch_cuda::DeviceScope scope(s.device.index());
        torch_cuda::native::sleep_cycles(cycles, hooks.native_stream(s));
      },
      py::arg("cycles"), py::arg("device"), py::arg("stream"),
      "Queues a kernel that spins for about `cycles` GPU clocks (like torch.cuda._sleep).");

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
