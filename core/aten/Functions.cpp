#include "aten/Functions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "aten/Dispatcher.h"
#include "c10/core/DeviceRegistry.h"
#include "c10/core/Stream.h"

namespace at {
namespace {

using c10::DeviceRegistry;

std::invalid_argument error(const std::string& op, const std::string& what) {
  return std::invalid_argument(op + ": " + what);
}

Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape strides(out.size(), 0);
  const Shape dense = contiguous_strides(in);
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    strides[offset + d] = in[d] == 1 ? 0 : dense[d];
  }
  return strides;
}

KernelCall make_call(std::vector<Tensor> inputs, const Tensor& out) {
  KernelCall call;
  for (const Tensor& input : inputs) {
    // Reductions read their input through the call's geometry instead: their
    // input has more dimensions than the output and does not broadcast to it.
    call.input_strides.push_back(input.dim() <= out.dim() ? broadcast_strides(input.shape(), out.shape())
                                                          : Shape{});
  }
  call.inputs = std::move(inputs);
  call.out = out;
  call.stream = c10::current_stream(out.device());
  return call;
}

void check_same_device(const std::string& op, const Tensor& a, const Tensor& b) {
  if (a.device() != b.device()) {
    throw error(op, "expected all tensors on the same device, got " + a.device().str() + " and " +
                        b.device().str());
  }
}

int64_t normalize_dim(const std::string& op, int64_t dim, int64_t ndim) {
  const int64_t rank = std::max<int64_t>(ndim, 1);
  if (dim < -rank || dim >= rank) {
    throw error(op, "dim " + std::to_string(dim) + " is out of range for a tensor of " +
                        std::to_string(ndim) + " dimension(s)");
  }
  return dim < 0 ? dim + rank : dim;
}

// How a reduction (or softmax) over `dim`, or over everything, sees its input:
// [outer, size, inner], and the shape of its result.
struct Reduction {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
  Shape out_shape;
};

Reduction reduction_geometry(const std::string& op, const Tensor& a, std::optional<int64_t> dim,
                             bool keepdim) {
  const Shape& shape = a.shape();
  if (!dim.has_value()) {
    return {1, a.numel(), 1, keepdim ? Shape(shape.size(), 1) : Shape{}};
  }
  const int64_t d = normalize_dim(op, *dim, a.dim());
  if (a.dim() == 0) {
    return {1, 1, 1, {}};
  }
  Shape out = shape;
  if (keepdim) {
    out[d] = 1;
  } else {
    out.erase(out.begin() + d);
  }
  return {numel_of(Shape(shape.begin(), shape.begin() + d)), shape[d],
          numel_of(Shape(shape.begin() + d + 1, shape.end())), out};
}

// Allocates the output and runs `op` over the reduction's geometry.
Tensor run_reduction(const std::string& op, const Tensor& a, const Reduction& r, const Shape& out_shape,
                     ScalarType out_dtype) {
  Tensor out = empty(out_shape, out_dtype, a.device());
  KernelCall call = make_call({a}, out);
  call.outer = r.outer;
  call.size = r.size;
  call.inner = r.inner;
  Dispatcher::instance().call(op, call);
  return out;
}

ScalarType scalar_result_dtype(ScalarType tensor, const Scalar& s) {
  if (s.kind == Scalar::Kind::Float && !c10::is_floating(tensor)) {
    return ScalarType::Float32;
  }
  if (s.kind == Scalar::Kind::Int && tensor == ScalarType::Bool) {
    return ScalarType::Int64;
  }
  return tensor;
}

}  // namespace

std::string shape_str(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw error(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor empty(const Shape& shape, ScalarType dtype, const Device& device) {
  return Tensor::empty(shape, dtype, device);
}

Tensor full(const Shape& shape, double value, ScalarType dtype, const Device& device) {
  Tensor t = empty(shape, dtype, device);
  return fill_(t, value);
}

Tensor arange(double start, double end, double step, ScalarType dtype, const Device& device) {
  if (step == 0) {
    throw error("arange", "step must be nonzero");
  }
  const double count = std::ceil((end - start) / step);
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  Tensor host = empty({n}, dtype, Device(c10::kCpuDeviceType));
  c10::dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(host.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      data[i] = static_cast<T>(start + static_cast<double>(i) * step);
    }
  });
  return to(host, device);
}

Tensor from_host(const void* data, const Shape& shape, ScalarType dtype, const Device& device) {
  Tensor host = empty(shape, dtype, Device(c10::kCpuDeviceType));
  if (host.nbytes() != 0) {
    std::memcpy(host.data_ptr(), data, host.nbytes());
  }
  return to(host, device);
}

void copy_to_host(const Tensor& t, void* dst) {
  if (t.nbytes() == 0) {
    return;
  }
  auto& hooks = DeviceRegistry::instance().hooks(t.device().type());
  hooks.copy_to_host(dst, t.data_ptr(), t.nbytes(), c10::current_stream(t.device()));
}

Tensor to(const Tensor& t, const Device& device) {
  if (t.device() == device) {
    return t;
  }
  auto& registry = DeviceRegistry::instance();
  if (!t.device().is_cpu() && !device.is_cpu()) {
    if (t.device().type() == device.type()) {
      Tensor out = empty(t.shape(), t.dtype(), device);
      if (out.nbytes() == 0) {
        return out;
      }
      // The copy is queued on the destination's current stream and reads t
      // there: record it, so t's block is not reused before the copy ran.
      t.record_stream(c10::current_stream(device));
      if (registry.hooks(device.type())
              .copy_between_devices(out.data_ptr(), device, t.data_ptr(), t.device(), t.nbytes())) {
        return out;
      }
    }
    // No direct path: stage through host memory.
    return to(to(t, Device(c10::kCpuDeviceType)), device);
  }
  Tensor out = empty(t.shape(), t.dtype(), device);
  if (out.nbytes() == 0) {
    return out;
  }
  if (t.device().is_cpu()) {
    registry.hooks(device.type())
        .copy_from_host(out.data_ptr(), t.data_ptr(), t.nbytes(), c10::current_stream(device));
  } else {
    copy_to_host(t, out.data_ptr());
  }
  return out;
}

Tensor to(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) {
    return t;
  }
  Tensor out = empty(t.shape(), dtype, t.device());
  Dispatcher::instance().call("copy", make_call({t}, out));
  return out;
}

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) {
  check_same_device(op, a, b);
  ScalarType dtype = c10::promote(a.dtype(), b.dtype());
  if (op == "div" && !c10::is_floating(dtype)) {
    dtype = ScalarType::Float32;  // true division, as in PyTorch
  }
  if (op == "sub" && dtype == ScalarType::Bool) {
    throw error(op, "subtracting bool tensors is not supported (PyTorch refuses it too)");
  }
  const Shape shape = broadcast_shapes(op, a.shape(), b.shape());
  Tensor out = empty(shape, dtype, a.device());
  Dispatcher::instance().call(op, make_call({to(a, dtype), to(b, dtype)}, out));
  return out;
}

Tensor binary(const std::string& op, const Tensor& a, const Scalar& b, bool reverse) {
  const ScalarType dtype = scalar_result_dtype(a.dtype(), b);
  const Tensor scalar = full({}, b.value, dtype, a.device());
  return reverse ? binary(op, scalar, a) : binary(op, a, scalar);
}

Tensor unary(const std::string& op, const Tensor& a) {
  ScalarType dtype = a.dtype();
  if ((op == "exp" || op == "tanh") && !c10::is_floating(dtype)) {
    dtype = ScalarType::Float32;
  }
  if ((op == "neg" || op == "relu") && dtype == ScalarType::Bool) {
    throw error(op, "not supported for bool tensors");
  }
  Tensor out = empty(a.shape(), dtype, a.device());
  Dispatcher::instance().call(op, make_call({to(a, dtype)}, out));
  return out;
}

Tensor sum(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  const Reduction r = reduction_geometry("sum", a, dim, keepdim);
  const ScalarType dtype = c10::is_floating(a.dtype()) ? a.dtype() : ScalarType::Int64;
  return run_reduction("sum", a, r, r.out_shape, dtype);
}

Tensor mean(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  if (!c10::is_floating(a.dtype())) {
    throw error("mean", std::string("expected a floating dtype, got ") + c10::name(a.dtype()));
  }
  const Reduction r = reduction_geometry("mean", a, dim, keepdim);
  return binary("div", sum(a, dim, keepdim), Scalar{static_cast<double>(r.size), Scalar::Kind::Int});
}

Tensor max(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  const Reduction r = reduction_geometry("max", a, dim, keepdim);
  if (r.size == 0) {
    throw error("max", "a reduction over an empty dimension has no identity");
  }
  return run_reduction("max", a, r, r.out_shape, a.dtype());
}

Tensor softmax(const Tensor& a, int64_t dim) {
  if (!c10::is_floating(a.dtype())) {
    throw error("softmax", std::string("expected a floating dtype, got ") + c10::name(a.dtype()));
  }
  return run_reduction("softmax", a, reduction_geometry("softmax", a, dim, true), a.shape(), a.dtype());
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device("matmul", a, b);
  if (a.dim() < 2 || a.dim() > 3 || b.dim() < 2 || b.dim() > 3) {
    throw error("matmul", "supports 2-D and batched 3-D operands, got shapes " + shape_str(a.shape()) +
                              " and " + shape_str(b.shape()));
  }
  const ScalarType dtype = c10::promote(a.dtype(), b.dtype());
  if (dtype == ScalarType::Bool) {
    throw error("matmul", "not supported for bool tensors");
  }
  const int64_t m = a.shape()[a.dim() - 2];
  const int64_t k = a.shape()[a.dim() - 1];
  const int64_t k2 = b.shape()[b.dim() - 2];
  const int64_t n = b.shape()[b.dim() - 1];
  if (k != k2) {
    throw error("matmul", "shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                              " are not aligned (" + std::to_string(k) + " != " + std::to_string(k2) + ")");
  }
  const int64_t batch_a = a.dim() == 3 ? a.shape()[0] : 1;
  const int64_t batch_b = b.dim() == 3 ? b.shape()[0] : 1;
  if (batch_a != batch_b && batch_a != 1 && batch_b != 1) {
    throw error("matmul", "batch sizes " + std::to_string(batch_a) + " and " + std::to_string(batch_b) +
                              " differ");
  }
  const int64_t batch = std::max(batch_a, batch_b);
  Shape shape = {m, n};
  if (a.dim() == 3 || b.dim() == 3) {
    shape.insert(shape.begin(), batch);
  }
  Tensor out = empty(shape, dtype, a.device());
  KernelCall call;
  call.inputs = {to(a, dtype), to(b, dtype)};
  call.out = out;
  call.stream = c10::current_stream(out.device());
  call.batch = batch;
  call.m = m;
  call.k = k;
  call.n = n;
  call.a_batch_stride = batch_a == 1 ? 0 : m * k;
  call.b_batch_stride = batch_b == 1 ? 0 : k * n;
  Dispatcher::instance().call("matmul", call);
  return out;
}

Tensor& fill_(Tensor& t, double value) {
  KernelCall call = make_call({}, t);
  call.scalar = value;
  Dispatcher::instance().call("fill", call);
  return t;
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  const Tensor source = to(src, dst.device());
  if (broadcast_shapes("copy_", dst.shape(), source.shape()) != dst.shape()) {
    throw error("copy_", "cannot broadcast source of shape " + shape_str(source.shape()) +
                             " to destination of shape " + shape_str(dst.shape()));
  }
  Dispatcher::instance().call("copy", make_call({source}, dst));
  return dst;
}

}  // namespace at
