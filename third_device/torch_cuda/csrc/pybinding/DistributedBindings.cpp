#include "torch_cuda/csrc/pybinding/DistributedBindings.h"

#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "torch_cuda/csrc/distributed/Nccl.h"

namespace py = pybind11;

namespace torch_cuda::python {
namespace {

distributed::NcclWork::Kind parse_kind(const std::string& name) {
  using Kind = distributed::NcclWork::Kind;
  if (name == "all_reduce") return Kind::AllReduce;
  if (name == "broadcast") return Kind::Broadcast;
  if (name == "all_gather") return Kind::AllGather;
  if (name == "reduce_scatter") return Kind::ReduceScatter;
  throw std::invalid_argument("nccl: unknown collective '" + name + "'");
}

}  // namespace

void init_distributed_bindings(py::module_& m) {
  using distributed::NcclCommunicator;
  using distributed::NcclWork;
  auto nccl_error = py::register_exception<distributed::NcclError>(m, "NcclError", PyExc_RuntimeError);
  py::register_exception<distributed::NcclTimeout>(m, "NcclTimeout", nccl_error.ptr());

  m.def("_nccl_headers_available", &distributed::nccl_headers_available,
        "Whether torch_cuda was built with the nvidia-nccl-cu13 wheel's nccl.h.");
  m.def("_nccl_load", &distributed::load_nccl, py::arg("library"));
  m.def("_nccl_loaded", &distributed::nccl_loaded);
  m.def("_nccl_version", &distributed::nccl_version, "ncclGetVersion(): e.g. 22809 for 2.28.9.");
  m.def("_nccl_unique_id", [] { return py::bytes(distributed::nccl_unique_id()); });

  py::class_<NcclWork, std::shared_ptr<NcclWork>>(m, "_NcclWork")
      .def("run", &NcclWork::run, py::arg("timeout"), py::call_guard<py::gil_scoped_release>())
      .def("cancel", &NcclWork::cancel, py::call_guard<py::gil_scoped_release>());

  py::class_<NcclCommunicator, std::shared_ptr<NcclCommunicator>>(m, "_NcclCommunicator")
      .def(py::init([](const py::bytes& unique_id, int rank, int world_size, int device, double timeout) {
             std::string id = unique_id;
             py::gil_scoped_release release;
             return NcclCommunicator::create(id, rank, world_size, device, timeout);
           }),
           py::arg("unique_id"), py::arg("rank"), py::arg("world_size"), py::arg("device"), py::arg("timeout"))
      .def_property_readonly("device", &NcclCommunicator::device)
      .def(
          "launch",
          [](NcclCommunicator& c, const std::string& kind, const std::vector<at::Tensor>& tensors,
             const std::string& op, int root, double timeout) {
            py::gil_scoped_release release;
            return c.launch(parse_kind(kind), tensors, op, root, timeout);
          },
          py::arg("kind"), py::arg("tensors"), py::arg("op"), py::arg("root"), py::arg("timeout"),
          "Queues a collective on the tensors' current stream (see csrc/distributed/Nccl.h).")
      .def("abort", &NcclCommunicator::abort, py::arg("why"), py::call_guard<py::gil_scoped_release>())
      .def("close", &NcclCommunicator::close, py::call_guard<py::gil_scoped_release>());
}

}  // namespace torch_cuda::python
