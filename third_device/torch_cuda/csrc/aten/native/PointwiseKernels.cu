// Element-wise ops (add sub mul div neg relu exp tanh copy fill) on CUDA,
// with core's shared op math (aten/native/ElementwiseMath.h, compiled
// __host__ __device__ through TORCH_OP_QUALIFIERS in this library's defines).

#include <stdexcept>
#include <string>
#include <type_traits>

#include "aten/native/ElementwiseMath.h"
#include "torch_cuda/csrc/aten/native/BinaryKernels.h"
#include "torch_cuda/csrc/aten/native/LaunchConfig.cuh"
#include "torch_cuda/csrc/aten/native/Launchers.h"

namespace torch_cuda::native {
namespace {

namespace math = at::native::math;
using at::native::BinaryKind;
using at::native::UnaryKind;

// Broadcasting: the element offsets of N operands for a linear index of the
// (contiguous) output. Dimensions are coalesced on the host first, so a dense
// operand costs one division, and only shapes with more than kMaxDims
// non-mergeable dimensions are refused.
constexpr int kMaxDims = 8;

template <int N>
struct OffsetCalculator {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  __device__ void offsets(int64_t linear, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) {
      out[k] = 0;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t index = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) {
        out[k] += index * strides[k][d];
      }
    }
  }
};

template <int N>
OffsetCalculator<N> make_offsets(const at::Shape& shape, const at::Shape* const (&strides)[N]) {
  // Drop size-1 dimensions, then merge a dimension into the next when every
  // operand walks them as one (stride[d] == stride[d+1] * size[d+1]).
  at::Shape sizes;
  at::Shape kept[N];
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      continue;
    }
    const bool merge = !sizes.empty() && [&] {
      for (int k = 0; k < N; ++k) {
        if (kept[k].back() != (*strides[k])[d] * shape[d]) {
          return false;
        }
      }
      return true;
    }();
    if (merge) {
      sizes.back() *= shape[d];
      for (int k = 0; k < N; ++k) {
        kept[k].back() = (*strides[k])[d];
      }
    } else {
      sizes.push_back(shape[d]);
      for (int k = 0; k < N; ++k) {
        kept[k].push_back((*strides[k])[d]);
      }
    }
  }
  if (sizes.size() > static_cast<size_t>(kMaxDims)) {
    throw std::invalid_argument("CUDA kernels broadcast over at most " + std::to_string(kMaxDims) +
                                " non-contiguous dimensions, got " + std::to_string(sizes.size()));
  }
  OffsetCalculator<N> calc;
  calc.ndim = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    calc.sizes[d] = sizes[d];
    for (int k = 0; k < N; ++k) {
      calc.strides[k][d] = kept[k][d];
    }
  }
  return calc;
}

// exp and tanh for the dtypes core sends (floats; ints are promoted by core
// but the template is still instantiated for them).
template <typename T>
__device__ T device_exp(T a) {
  if constexpr (std::is_same_v<T, float>) {
    return ::expf(a);
  } else {
    return static_cast<T>(::exp(static_cast<double>(a)));
  }
}

template <typename T>
__device__ T device_tanh(T a) {
  if constexpr (std::is_same_v<T, float>) {
    return ::tanhf(a);
  } else {
    return static_cast<T>(::tanh(static_cast<double>(a)));
  }
}

template <typename T>
__device__ T device_unary(UnaryKind kind, T a) {
  switch (kind) {
    case UnaryKind::Neg:
      return static_cast<T>(-a);
    case UnaryKind::Relu:
      return math::relu(a);
    case UnaryKind::Exp:
      return device_exp(a);
    case UnaryKind::Tanh:
      return device_tanh(a);
  }
  return a;
}

// The op kind is a kernel argument, not a template parameter: it is uniform
// across the grid, so the switch costs nothing measurable, and it keeps the
// number of instantiations (each compiled for every configured arch) small.
template <typename T>
__global__ void binary_kernel(BinaryKind kind, const T* a, const T* b, T* out, int64_t n,
                              OffsetCalculator<2> calc) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[2];
    calc.offsets(i, off);
    out[i] = at::native::apply_binary(kind, a[off[0]], b[off[1]]);
  }
}

// Float-only, dense, in place allowed: the combine step collectives use.
__global__ void dense_binary_kernel(BinaryOp op, const float* a, const float* b, float* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float x = a[i];
    const float y = b[i];
    switch (op) {
      case BinaryOp::Add:
        out[i] = math::add(x, y);
        break;
      case BinaryOp::Sub:
        out[i] = math::sub(x, y);
        break;
      case BinaryOp::Mul:
        out[i] = math::mul(x, y);
        break;
      case BinaryOp::Div:
        out[i] = math::div(x, y);
        break;
      case BinaryOp::Maximum:
        out[i] = math::maximum(x, y);
        break;
      case BinaryOp::Minimum:
        out[i] = math::minimum(x, y);
        break;
    }
  }
}

template <typename T>
__global__ void unary_kernel(UnaryKind kind, const T* a, T* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = device_unary(kind, a[i]);
  }
}

template <typename I, typename O>
__global__ void copy_kernel(const I* in, O* out, int64_t n, OffsetCalculator<1> calc) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[1];
    calc.offsets(i, off);
    // Same conversion as the CPU's static_cast (float -> bool is != 0).
    out[i] = static_cast<O>(in[off[0]]);
  }
}

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = value;
  }
}

__global__ void sleep_kernel(int64_t cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void binary(BinaryKind kind, const at::KernelCall& c, cudaStream_t stream) {
  const int64_t n = c.out.numel();
  if (n == 0) {
    return;
  }
  const at::Shape* const strides[2] = {&c.input_strides[0], &c.input_strides[1]};
  const OffsetCalculator<2> calc = make_offsets<2>(c.out.shape(), strides);
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    binary_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        kind, static_cast<const T*>(c.inputs[0].data_ptr()), static_cast<const T*>(c.inputs[1].data_ptr()),
        static_cast<T*>(c.out.data_ptr()), n, calc);
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

void unary(UnaryKind kind, const at::KernelCall& c, cudaStream_t stream) {
  const int64_t n = c.out.numel();
  if (n == 0) {
    return;
  }
  // Core hands unary ops an input of out's shape and dtype: a dense loop.
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw std::invalid_argument("CUDA unary kernels take no bool tensors (core promotes or refuses them)");
    } else {
      unary_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          kind, static_cast<const T*>(c.inputs[0].data_ptr()), static_cast<T*>(c.out.data_ptr()), n);
    }
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

void copy(const at::KernelCall& c, cudaStream_t stream) {
  const int64_t n = c.out.numel();
  if (n == 0) {
    return;
  }
  const at::Shape* const strides[1] = {&c.input_strides[0]};
  const OffsetCalculator<1> calc = make_offsets<1>(c.out.shape(), strides);
  c10::dispatch_dtype(c.out.dtype(), [&](auto out_tag) {
    using O = decltype(out_tag);
    c10::dispatch_dtype(c.inputs[0].dtype(), [&](auto in_tag) {
      using I = decltype(in_tag);
      copy_kernel<I, O><<<blocks_for(n), kThreads, 0, stream>>>(
          static_cast<const I*>(c.inputs[0].data_ptr()), static_cast<O*>(c.out.data_ptr()), n, calc);
    });
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

void fill(const at::KernelCall& c, cudaStream_t stream) {
  const int64_t n = c.out.numel();
  if (n == 0) {
    return;
  }
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(c.out.data_ptr()), n,
                                                            static_cast<T>(c.scalar));
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

void sleep_cycles(int64_t cycles, cudaStream_t stream) {
  sleep_kernel<<<1, 1, 0, stream>>>(cycles);
  TORCH_CUDA_CHECK_LAUNCH();
}

void launch_binary(BinaryOp op, const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  dense_binary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(op, a, b, out, n);
  TORCH_CUDA_CHECK_LAUNCH();
}

}  // namespace torch_cuda::native
