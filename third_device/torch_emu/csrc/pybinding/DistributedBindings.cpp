// Bindings for torch_emu.distributed (the eccl backend): launch a collective on
// a tensor's current stream and reach its host staging buffer as NumPy arrays.
#include "torch_emu/csrc/pybinding/DistributedBindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "c10/core/Stream.h"
#include "torch_emu/csrc/distributed/EmuCollective.h"

namespace py = pybind11;

namespace torch_emu::python {
namespace {

py::dtype numpy_dtype(c10::ScalarType t) {
  return c10::dispatch_dtype(t, [](auto tag) { return py::dtype::of<decltype(tag)>(); });
}

}  // namespace

void init_distributed_bindings(py::module_& m) {
  using Handle = std::shared_ptr<EmuCollective>;
  py::class_<EmuCollective, Handle>(m, "_Collective")
      .def("wait_staged", &EmuCollective::wait_staged, py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>(),
           "Waits until the stream has copied the tensors into host staging memory.")
      .def(
          "arrays",
          [](const Handle& c) {
            py::list out;
            for (size_t i = 0; i < c->size(); ++i) {
              const at::Tensor& t = c->tensor(i);
              std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
              // The capsule keeps the collective (and its buffer) alive with the array.
              py::capsule owner(new Handle(c), [](void* p) { delete static_cast<Handle*>(p); });
              out.append(py::array(numpy_dtype(t.dtype()), shape, c->host_data(i), owner));
            }
            return out;
          },
          "NumPy views of the staged tensors (write results into them before release).")
      .def("release", &EmuCollective::release, py::arg("write_back"))
      .def("wait_finished", &EmuCollective::wait_finished, py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());

  m.def(
      "_launch_collective",
      [](const std::vector<at::Tensor>& tensors, const std::vector<bool>& writes) {
        if (tensors.empty()) {
          throw std::invalid_argument("eccl: a collective needs at least one tensor");
        }
        return EmuCollective::launch(tensors, writes, c10::current_stream(tensors[0].device()));
      },
      py::arg("tensors"), py::arg("writes"),
      "Queues a collective on the current stream of the tensors' emu device.");
}

}  // namespace torch_emu::python
