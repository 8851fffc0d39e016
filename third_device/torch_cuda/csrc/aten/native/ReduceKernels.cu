// Reductions over [outer, size, inner] (sum, max) and softmax on CUDA.
//
// One kernel shape serves every geometry. A block of (bx, by) threads owns bx
// adjacent columns `i` of one `o`; its by rows of threads stride along `size`
// and combine through shared memory. inner == 1 (a contiguous row) uses
// bx = 1, by = 256, so a warp reads 32 consecutive elements; inner > 1 puts
// up to 32 columns across the warp, again reading consecutive addresses.
// When outer * columns gives too few blocks to fill the GPU and rows are
// long, `size` is split across blocks (grid z) and a second pass combines the
// partial results, so a full reduction of millions of elements uses every SM.
//
// Numerics follow core's CPU kernels: floating sums accumulate in double and
// integer sums in int64 (a float32 sum of 1e6 x 0.1 stays at 100000);
// max propagates NaN; softmax subtracts the maximum and works in double.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "aten/Tensor.h"
#include "aten/native/ElementwiseMath.h"
#include "torch_cuda/csrc/aten/native/LaunchConfig.cuh"
#include "torch_cuda/csrc/aten/native/Launchers.h"

namespace torch_cuda::native {
namespace {

namespace math = at::native::math;

template <typename A>
struct SumReducer {
  __device__ A identity() const { return A(0); }
  template <typename I>
  __device__ A load(I v) const {
    return static_cast<A>(v);
  }
  __device__ A combine(A a, A b) const { return a + b; }
};

template <typename T>
struct MaxReducer {
  // Spelled with math.h's macros and <cstdint>'s limits: std::numeric_limits
  // is constexpr host code, which device code may not call without nvcc's
  // --expt-relaxed-constexpr.
  __device__ T identity() const {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(-INFINITY);
    } else if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else {
      return INT64_MIN;
    }
  }
  __device__ T load(T v) const { return v; }
  __device__ T combine(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      // NaN propagates, as on the CPU, in PyTorch and in NumPy.
      if (a != a || b != b) {
        return static_cast<T>(NAN);
      }
    }
    return math::maximum(a, b);
  }
};

// Shared memory is declared as double so it is aligned for every accumulator.
__device__ inline void* shared_scratch() {
  extern __shared__ double scratch[];
  return scratch;
}

// Tree-combines the by partial values of each column in shared memory;
// afterwards column tx's result is in row 0. by is a power of two.
template <typename A, typename Combine>
__device__ A block_combine(A value, Combine combine) {
  A* smem = static_cast<A*>(shared_scratch());
  const unsigned tx = threadIdx.x;
  const unsigned ty = threadIdx.y;
  const unsigned bx = blockDim.x;
  smem[ty * bx + tx] = value;
  __syncthreads();
  for (unsigned step = blockDim.y / 2; step > 0; step >>= 1) {
    if (ty < step) {
      smem[ty * bx + tx] = combine(smem[ty * bx + tx], smem[(ty + step) * bx + tx]);
    }
    __syncthreads();
  }
  const A result = smem[tx];
  __syncthreads();  // the scratch is reused by the caller's next combine
  return result;
}

// in: [outer, size, inner]; out: [outer, gridDim.z, inner], where block z
// covers rows [z * chunk, min(size, (z + 1) * chunk)).
template <typename I, typename A, typename O, typename R>
__global__ void reduce_kernel(const I* in, O* out, int64_t outer, int64_t size, int64_t inner, int64_t chunk,
                              R reducer) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.z) * chunk;
  const int64_t end = begin + chunk < size ? begin + chunk : size;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    A acc = reducer.identity();
    if (i < inner) {
      const I* row = in + o * size * inner + i;
      for (int64_t s = begin + threadIdx.y; s < end; s += blockDim.y) {
        acc = reducer.combine(acc, reducer.load(row[s * inner]));
      }
    }
    acc = block_combine(acc, [&](A a, A b) { return reducer.combine(a, b); });
    if (threadIdx.y == 0 && i < inner) {
      out[(o * gridDim.z + blockIdx.z) * inner + i] = static_cast<O>(acc);
    }
  }
}

template <typename T>
__global__ void softmax_kernel(const T* in, T* out, int64_t outer, int64_t size, int64_t inner) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    const int64_t base = o * size * inner + i;
    double peak = -INFINITY;
    if (i < inner) {
      for (int64_t s = threadIdx.y; s < size; s += blockDim.y) {
        peak = ::fmax(peak, static_cast<double>(in[base + s * inner]));
      }
    }
    peak = block_combine(peak, [](double a, double b) { return ::fmax(a, b); });
    double total = 0;
    if (i < inner) {
      for (int64_t s = threadIdx.y; s < size; s += blockDim.y) {
        total += ::exp(static_cast<double>(in[base + s * inner]) - peak);
      }
    }
    total = block_combine(total, [](double a, double b) { return a + b; });
    if (i < inner) {
      for (int64_t s = threadIdx.y; s < size; s += blockDim.y) {
        out[base + s * inner] = static_cast<T>(::exp(static_cast<double>(in[base + s * inner]) - peak) / total);
      }
    }
  }
}

struct Shape2D {
  dim3 block;
  dim3 grid;
};

// Block and grid for [outer, size, inner], without splitting `size`.
Shape2D geometry(int64_t outer, int64_t inner) {
  unsigned bx = 1;
  while (bx < 32 && static_cast<int64_t>(bx) < inner) {
    bx *= 2;
  }
  Shape2D g;
  g.block = dim3(bx, kThreads / bx);
  const int64_t columns = (inner + bx - 1) / bx;
  g.grid = dim3(static_cast<unsigned>(columns), static_cast<unsigned>(std::min<int64_t>(outer, 65535)), 1);
  return g;
}

template <typename T>
constexpr c10::ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, double>) {
    return c10::ScalarType::Float64;
  } else if constexpr (std::is_same_v<T, float>) {
    return c10::ScalarType::Float32;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return c10::ScalarType::Int64;
  } else {
    return c10::ScalarType::Bool;
  }
}

template <typename I, typename A, typename O, typename R>
void reduce(const at::KernelCall& c, R reducer, cudaStream_t stream) {
  const int64_t outer = c.outer;
  const int64_t size = c.size;
  const int64_t inner = c.inner;
  if (outer * inner == 0) {
    return;
  }
  Shape2D g = geometry(outer, inner);
  const size_t shared = static_cast<size_t>(kThreads) * sizeof(A);
  const I* in = static_cast<const I*>(c.inputs[0].data_ptr());
  O* out = static_cast<O*>(c.out.data_ptr());

  // Split long rows when the grid would leave SMs idle (4 blocks per SM is
  // the target); each split still gets at least 16 elements per thread.
  const int64_t blocks = static_cast<int64_t>(g.grid.x) * g.grid.y;
  const int64_t target = 4 * static_cast<int64_t>(multiprocessor_count());
  const int64_t min_chunk = 16 * static_cast<int64_t>(g.block.y);
  int64_t splits = 1;
  if (blocks < target && size > 2 * min_chunk) {
    splits = std::min<int64_t>({(target + blocks - 1) / blocks, size / min_chunk, 65535});
  }
  if (splits <= 1) {
    reduce_kernel<I, A, O><<<g.grid, g.block, shared, stream>>>(in, out, outer, size, inner, size, reducer);
    TORCH_CUDA_CHECK_LAUNCH();
    return;
  }
  const int64_t chunk = (size + splits - 1) / splits;
  splits = (size + chunk - 1) / chunk;  // no empty last split
  // Partial results in A, from core's caching allocator on the call's stream
  // (not the thread's current one, which a caller may have changed): freed
  // when `partial` goes out of scope and reused only by later work on that
  // stream, after these kernels.
  at::Tensor partial = at::Tensor::empty({outer, splits, inner}, scalar_type_of<A>(), c.stream);
  A* mid = static_cast<A*>(partial.data_ptr());
  g.grid.z = static_cast<unsigned>(splits);
  reduce_kernel<I, A, A><<<g.grid, g.block, shared, stream>>>(in, mid, outer, size, inner, chunk, reducer);
  TORCH_CUDA_CHECK_LAUNCH();
  g.grid.z = 1;
  reduce_kernel<A, A, O><<<g.grid, g.block, shared, stream>>>(mid, out, outer, splits, inner, splits, reducer);
  TORCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

void sum(const at::KernelCall& c, cudaStream_t stream) {
  // Output dtype: the input's when floating, else int64 (core decides).
  c10::dispatch_dtype(c.inputs[0].dtype(), [&](auto tag) {
    using I = decltype(tag);
    if constexpr (std::is_floating_point_v<I>) {
      reduce<I, double, I>(c, SumReducer<double>{}, stream);
    } else {
      reduce<I, int64_t, int64_t>(c, SumReducer<int64_t>{}, stream);
    }
  });
}

void max(const at::KernelCall& c, cudaStream_t stream) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reduce<T, T, T>(c, MaxReducer<T>{}, stream);
  });
}

void softmax(const at::KernelCall& c, cudaStream_t stream) {
  if (c.outer * c.inner * c.size == 0) {
    return;
  }
  const Shape2D g = geometry(c.outer, c.inner);
  const size_t shared = static_cast<size_t>(kThreads) * sizeof(double);
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      softmax_kernel<T><<<g.grid, g.block, shared, stream>>>(static_cast<const T*>(c.inputs[0].data_ptr()),
                                                              static_cast<T*>(c.out.data_ptr()), c.outer,
                                                              c.size, c.inner);
    } else {
      throw std::invalid_argument("softmax needs a floating dtype");
    }
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

}  // namespace torch_cuda::native
