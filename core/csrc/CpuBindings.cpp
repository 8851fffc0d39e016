// The CPU kernels' configuration: capability in use, the BLAS, thread count.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "aten/native/cpu/Blas.h"
#include "aten/native/cpu/CpuCapability.h"
#include "csrc/Bindings.h"

namespace py = pybind11;

namespace torch_core::python {

void init_cpu_bindings(py::module_& m) {
  namespace cpu = at::native::cpu;
  m.def("_cpu_config", [] {
    std::vector<std::string> supported;
    for (cpu::CpuCapability level : cpu::supported_cpu_capabilities()) {
      supported.emplace_back(cpu::capability_name(level));
    }
    py::dict out;
    out["cpu_capability"] = cpu::capability_name(cpu::cpu_capability());
    out["cpu_capabilities_supported"] = supported;
    out["cpu_capability_env"] = cpu::kCpuCapabilityEnv;
    out["blas"] = cpu::blas_name();
    out["blas_config"] = cpu::blas_build_config();
    out["blas_enabled"] = cpu::blas_enabled();
    out["blas_env"] = cpu::kBlasEnv;
    out["num_threads"] = cpu::blas_num_threads();
    return out;
  }, "The CPU kernels' configuration (torch_core.config()).");
  m.def("get_num_threads", &cpu::blas_num_threads, "Threads a CPU op may use.");
  m.def("set_num_threads", &cpu::set_blas_num_threads, py::arg("threads"),
        "Sets the threads a CPU op may use (the BLAS's matmul; the other CPU kernels run on the calling thread).");
}

}  // namespace torch_core::python
