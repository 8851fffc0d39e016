// Tensors, dtypes, creation, NumPy interop and the ops, with Python operators.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "aten/Dispatcher.h"
#include "aten/Functions.h"
#include "csrc/Bindings.h"

namespace py = pybind11;

namespace torch_core::python {
namespace {

using at::Tensor;
using c10::ScalarType;

at::Scalar to_scalar(const py::object& value) {
  if (py::isinstance<py::bool_>(value)) {
    return {value.cast<bool>() ? 1.0 : 0.0, at::Scalar::Kind::Bool};
  }
  if (py::isinstance<py::int_>(value)) {
    return {value.cast<double>(), at::Scalar::Kind::Int};
  }
  if (py::isinstance<py::float_>(value)) {
    return {value.cast<double>(), at::Scalar::Kind::Float};
  }
  throw py::type_error("expected a Tensor or a Python number, got " +
                       std::string(py::str(py::type::of(value).attr("__name__"))));
}

// Binary op with a Tensor or a Python number on the other side.
Tensor binary_any(const std::string& op, const Tensor& a, const py::object& other, bool reverse) {
  if (py::isinstance<Tensor>(other)) {
    const Tensor& b = other.cast<const Tensor&>();
    return reverse ? at::binary(op, b, a) : at::binary(op, a, b);
  }
  return at::binary(op, a, to_scalar(other), reverse);
}

ScalarType dtype_of_numpy(const py::array& array) {
  const py::dtype dt = array.dtype();
  if (dt.is(py::dtype::of<float>())) return ScalarType::Float32;
  if (dt.is(py::dtype::of<double>())) return ScalarType::Float64;
  if (dt.is(py::dtype::of<int64_t>())) return ScalarType::Int64;
  if (dt.is(py::dtype::of<bool>())) return ScalarType::Bool;
  throw py::type_error("unsupported NumPy dtype " + std::string(py::str(dt)) +
                       " (supported: float32, float64, int64, bool)");
}

py::dtype numpy_dtype(ScalarType t) {
  return c10::dispatch_dtype(t, [](auto tag) { return py::dtype::of<decltype(tag)>(); });
}

Tensor from_numpy(const py::array& input, const c10::Device& device) {
  const ScalarType dtype = dtype_of_numpy(input);
  // A C-contiguous copy when needed (views, Fortran order, negative strides).
  const py::array array = py::array::ensure(input, py::array::c_style);
  at::Shape shape(array.shape(), array.shape() + array.ndim());
  return at::from_host(array.data(), shape, dtype, device);
}

py::array to_numpy(const Tensor& t) {
  py::array out(numpy_dtype(t.dtype()), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  {
    py::gil_scoped_release release;
    at::copy_to_host(t, out.mutable_data());
  }
  return out;
}

}  // namespace

void init_tensor_bindings(py::module_& m) {
  py::enum_<ScalarType>(m, "dtype")
      .value("bool", ScalarType::Bool)
      .value("int64", ScalarType::Int64)
      .value("float32", ScalarType::Float32)
      .value("float64", ScalarType::Float64)
      .def_property_readonly("itemsize", [](ScalarType t) { return c10::itemsize(t); })
      .def_property_readonly("is_floating_point", [](ScalarType t) { return c10::is_floating(t); });

  py::class_<Tensor>(m, "Tensor")
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("size", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); },
           "The storage address in the device's address space.")
      .def("numpy", &to_numpy, "A NumPy copy on the host (waits for pending work).")
      .def("to", [](const Tensor& t, const c10::Device& d) { return at::to(t, d); }, py::arg("device"),
           py::call_guard<py::gil_scoped_release>())
      .def("to", [](const Tensor& t, ScalarType dtype) { return at::to(t, dtype); }, py::arg("dtype"))
      .def("cpu", [](const Tensor& t) { return at::to(t, c10::Device(c10::kCpuDeviceType)); },
           py::call_guard<py::gil_scoped_release>())
      .def("add", [](const Tensor& a, const py::object& b) { return binary_any("add", a, b, false); })
      .def("sub", [](const Tensor& a, const py::object& b) { return binary_any("sub", a, b, false); })
      .def("mul", [](const Tensor& a, const py::object& b) { return binary_any("mul", a, b, false); })
      .def("div", [](const Tensor& a, const py::object& b) { return binary_any("div", a, b, false); })
      .def("__add__", [](const Tensor& a, const py::object& b) { return binary_any("add", a, b, false); })
      .def("__radd__", [](const Tensor& a, const py::object& b) { return binary_any("add", a, b, true); })
      .def("__sub__", [](const Tensor& a, const py::object& b) { return binary_any("sub", a, b, false); })
      .def("__rsub__", [](const Tensor& a, const py::object& b) { return binary_any("sub", a, b, true); })
      .def("__mul__", [](const Tensor& a, const py::object& b) { return binary_any("mul", a, b, false); })
      .def("__rmul__", [](const Tensor& a, const py::object& b) { return binary_any("mul", a, b, true); })
      .def("__truediv__", [](const Tensor& a, const py::object& b) { return binary_any("div", a, b, false); })
      .def("__rtruediv__", [](const Tensor& a, const py::object& b) { return binary_any("div", a, b, true); })
      .def("__neg__", [](const Tensor& a) { return at::unary("neg", a); })
      .def("__matmul__", &at::matmul)
      .def("neg", [](const Tensor& a) { return at::unary("neg", a); })
      .def("relu", [](const Tensor& a) { return at::unary("relu", a); })
      .def("exp", [](const Tensor& a) { return at::unary("exp", a); })
      .def("tanh", [](const Tensor& a) { return at::unary("tanh", a); })
      .def("sum", &at::sum, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("mean", &at::mean, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("max", &at::max, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("softmax", &at::softmax, py::arg("dim"))
      .def("matmul", &at::matmul)
      .def("fill_", [](Tensor& t, double v) { return at::fill_(t, v); }, py::arg("value"))
      .def("copy_", [](Tensor& t, const Tensor& src) { return at::copy_(t, src); }, py::arg("src"))
      .def("_record_stream",
           [](const Tensor& t, const c10::Device& device, c10::StreamId id) { t.record_stream({device, id}); },
           py::arg("device"), py::arg("stream"),
           "Marks the tensor as used by work on a stream (record_stream takes a Stream).");

  m.def("empty", &at::empty, py::arg("shape"), py::arg("dtype"), py::arg("device"));
  m.def("full", &at::full, py::arg("shape"), py::arg("value"), py::arg("dtype"), py::arg("device"));
  m.def("arange", &at::arange, py::arg("start"), py::arg("end"), py::arg("step"), py::arg("dtype"),
        py::arg("device"));
  m.def("from_numpy", &from_numpy, py::arg("array"), py::arg("device"));
  m.def("broadcast_shapes", [](const at::Shape& a, const at::Shape& b) { return at::broadcast_shapes("broadcast_shapes", a, b); });
  m.def("kernel_ops", [](const std::string& type) {
    return at::Dispatcher::instance().ops(c10::Device::parse(type).type());
  }, py::arg("type"), "Ops with a kernel registered for a device type.");
}

}  // namespace torch_core::python
