// Registers core's kernels for the CPU: run at once, on host memory. Each op
// runs the vectorised kernel of the CPU capability in use (CpuCapability.h)
// when its dtype has one, matmul the BLAS first (Blas.h), and anything else
// (bool tensors, copies, fills) the generic kernel every device shares
// (Kernels.h).
#include <optional>
#include <tuple>

#include "aten/Dispatcher.h"
#include "aten/native/Kernels.h"
#include "aten/native/cpu/Blas.h"
#include "aten/native/cpu/CpuCapability.h"
#include "c10/core/RegistrationSite.h"

namespace at::native {
namespace {

using cpu::Dtype;

char* host(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

std::optional<Dtype> table_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return Dtype::Float32;
    case ScalarType::Float64:
      return Dtype::Float64;
    case ScalarType::Int64:
      return Dtype::Int64;
    case ScalarType::Bool:
      break;
  }
  return std::nullopt;
}

int slot(Dtype d) { return static_cast<int>(d); }

// out's shape and the inputs' broadcast strides as a loop: size-1 dimensions
// dropped, neighbours merged where both inputs step through them as one.
// False when the loop does not fit (more dimensions than kMaxLoopDims).
bool coalesce(const KernelCall& c, cpu::BinaryLoop& loop) {
  const Shape& shape = c.out.shape();
  const Shape& sa = c.input_strides[0];
  const Shape& sb = c.input_strides[1];
  int nd = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      continue;
    }
    if (nd > 0 && loop.stride_a[nd - 1] == sa[d] * shape[d] && loop.stride_b[nd - 1] == sb[d] * shape[d]) {
      loop.shape[nd - 1] *= shape[d];
      loop.stride_a[nd - 1] = sa[d];
      loop.stride_b[nd - 1] = sb[d];
      continue;
    }
    if (nd == cpu::kMaxLoopDims) {
      return false;
    }
    loop.shape[nd] = shape[d];
    loop.stride_a[nd] = sa[d];
    loop.stride_b[nd] = sb[d];
    ++nd;
  }
  if (nd == 0) {  // one element
    loop.shape[0] = 1;
    nd = 1;
  }
  loop.ndim = nd;
  // The vector loops step the inner run contiguously or not at all.
  const int64_t ia = loop.stride_a[nd - 1];
  const int64_t ib = loop.stride_b[nd - 1];
  return (ia == 0 || ia == 1) && (ib == 0 || ib == 1);
}

bool run_binary(BinaryKind kind, const KernelCall& c) {
  const std::optional<Dtype> dtype = table_dtype(c.out.dtype());
  if (!dtype) {
    return false;
  }
  const cpu::BinaryFn fn = cpu::cpu_kernel_table().binary[static_cast<int>(kind)][slot(*dtype)];
  cpu::BinaryLoop loop;
  if (fn == nullptr || !coalesce(c, loop)) {
    return false;
  }
  if (c.out.numel() != 0) {
    fn(loop, host(c.inputs[0]), host(c.inputs[1]), host(c.out));
  }
  return true;
}

bool run_unary(UnaryKind kind, const KernelCall& c) {
  const std::optional<Dtype> dtype = table_dtype(c.out.dtype());
  if (!dtype) {
    return false;
  }
  const cpu::UnaryFn fn = cpu::cpu_kernel_table().unary[static_cast<int>(kind)][slot(*dtype)];
  if (fn == nullptr) {
    return false;
  }
  fn(c.out.numel(), host(c.inputs[0]), host(c.out));
  return true;
}

// sum, max, softmax: the table's kernel for the input's dtype, when the
// output has that dtype too (bool sums to int64: generic).
bool run_reduction(cpu::ReduceFn const (&fns)[cpu::kDtypes], const KernelCall& c) {
  const std::optional<Dtype> dtype = table_dtype(c.inputs[0].dtype());
  if (!dtype || c.out.dtype() != c.inputs[0].dtype() || fns[slot(*dtype)] == nullptr) {
    return false;
  }
  // An empty reduced dimension still writes the identity (sum's zeros).
  if (c.out.numel() != 0) {
    fns[slot(*dtype)](cpu::Reduction{c.outer, c.size, c.inner}, host(c.inputs[0]), host(c.out));
  }
  return true;
}

template <typename T>
void blas_matmul(const KernelCall& c) {
  const T* a = reinterpret_cast<const T*>(host(c.inputs[0]));
  const T* b = reinterpret_cast<const T*>(host(c.inputs[1]));
  T* out = reinterpret_cast<T*>(host(c.out));
  for (int64_t batch = 0; batch < c.batch; ++batch) {
    cpu::blas_gemm(c.m, c.n, c.k, a + batch * c.a_batch_stride, b + batch * c.b_batch_stride, out + batch * c.m * c.n);
  }
}

bool run_matmul(const KernelCall& c) {
  const std::optional<Dtype> dtype = table_dtype(c.out.dtype());
  if (!dtype) {
    return false;
  }
  if (c.out.numel() == 0) {
    return true;
  }
  const bool floating = *dtype != Dtype::Int64;
  if (floating && cpu::blas_enabled() && cpu::blas_takes(c.m, c.n, c.k)) {
    if (*dtype == Dtype::Float32) {
      blas_matmul<float>(c);
    } else {
      blas_matmul<double>(c);
    }
    return true;
  }
  const cpu::MatmulFn fn = cpu::cpu_kernel_table().matmul[slot(*dtype)];
  if (fn == nullptr) {
    return false;
  }
  const cpu::Matmul g{c.batch, c.m, c.k, c.n, c.a_batch_stride, c.b_batch_stride};
  fn(g, host(c.inputs[0]), host(c.inputs[1]), host(c.out));
  return true;
}

const bool registered = [] {
  c10::RegistrationSite site("torch_core");  // the owner errors name
  auto reg = [](const char* op, Kernel kernel) {
    Dispatcher::instance().register_kernel(op, c10::kCpuDeviceType, std::move(kernel));
  };
  const std::pair<const char*, BinaryKind> binaries[] = {
      {"add", BinaryKind::Add}, {"sub", BinaryKind::Sub}, {"mul", BinaryKind::Mul}, {"div", BinaryKind::Div}};
  for (const auto& [name, kind] : binaries) {
    const BinaryKind k = kind;
    reg(name, [k](const KernelCall& c) {
      if (!run_binary(k, c)) {
        binary_kernel(k, c, host);
      }
    });
  }
  const std::pair<const char*, UnaryKind> unaries[] = {
      {"neg", UnaryKind::Neg}, {"relu", UnaryKind::Relu}, {"exp", UnaryKind::Exp}, {"tanh", UnaryKind::Tanh}};
  for (const auto& [name, kind] : unaries) {
    const UnaryKind k = kind;
    reg(name, [k](const KernelCall& c) {
      if (!run_unary(k, c)) {
        unary_kernel(k, c, host);
      }
    });
  }
  using Generic = void (*)(const KernelCall&);
  using TableRow = cpu::ReduceFn const (cpu::KernelTable::*)[cpu::kDtypes];
  const std::tuple<const char*, TableRow, Generic> reductions[] = {
      {"sum", &cpu::KernelTable::sum, [](const KernelCall& c) { sum_kernel(c, host); }},
      {"max", &cpu::KernelTable::max, [](const KernelCall& c) { max_kernel(c, host); }},
      {"softmax", &cpu::KernelTable::softmax, [](const KernelCall& c) { softmax_kernel(c, host); }},
  };
  for (const auto& [name, row, generic] : reductions) {
    reg(name, [row = row, generic = generic](const KernelCall& c) {
      if (!run_reduction(cpu::cpu_kernel_table().*row, c)) {
        generic(c);
      }
    });
  }
  reg("matmul", [](const KernelCall& c) {
    if (!run_matmul(c)) {
      matmul_kernel(c, host);
    }
  });
  reg("copy", [](const KernelCall& c) { copy_kernel(c, host); });
  reg("fill", [](const KernelCall& c) { fill_kernel(c, host); });
  return true;
}();

}  // namespace
}  // namespace at::native
