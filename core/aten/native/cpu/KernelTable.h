#pragma once

// The interface between the CPU's op kernels (CpuKernels.cpp) and the kernel
// translation unit compiled once per CPU capability (VecKernels.cpp, see
// CpuCapability.h). Only plain structs, raw pointers and sizes cross it: that
// translation unit uses no inline function of another header, so the linker
// can never keep an AVX-512 copy of a shared inline function and hand it to
// baseline code.

#include <cstdint>

#include "aten/native/ElementwiseMath.h"

namespace at::native::cpu {

// The dtypes the table has kernels for (bool ops use the generic kernels).
enum class Dtype : int { Float32, Float64, Int64 };
constexpr int kDtypes = 3;
constexpr int kBinaryKinds = 4;  // BinaryKind's enumerators
constexpr int kUnaryKinds = 4;   // UnaryKind's enumerators

// An element-wise loop over out's elements in row-major order, its dimensions
// coalesced so the last is the longest run; each input's stride there is 1
// (contiguous) or 0 (broadcast). Strides are in elements.
constexpr int kMaxLoopDims = 16;
struct BinaryLoop {
  int ndim = 0;
  int64_t shape[kMaxLoopDims] = {};
  int64_t stride_a[kMaxLoopDims] = {};
  int64_t stride_b[kMaxLoopDims] = {};
};

// A reduction's (or softmax's) contiguous input seen as [outer, size, inner],
// reduced over `size`.
struct Reduction {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};

// out[b] (m x n) = a[b] (m x k) @ b[b] (k x n), row-major; batch strides in
// elements (0: shared by every batch).
struct Matmul {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
};

using BinaryFn = void (*)(const BinaryLoop& loop, const void* a, const void* b, void* out);
using UnaryFn = void (*)(int64_t n, const void* in, void* out);
using ReduceFn = void (*)(const Reduction& r, const void* in, void* out);
using MatmulFn = void (*)(const Matmul& g, const void* a, const void* b, void* out);

// One capability's kernels, indexed by op kind and Dtype; nullptr where there
// is none (the caller then runs the generic kernel of aten/native/Kernels.h).
struct KernelTable {
  BinaryFn binary[kBinaryKinds][kDtypes];
  UnaryFn unary[kUnaryKinds][kDtypes];
  ReduceFn sum[kDtypes];  // out has the input's dtype
  ReduceFn max[kDtypes];
  ReduceFn softmax[kDtypes];
  MatmulFn matmul[kDtypes];  // blocked and cache-tiled: what the BLAS does not take
};

// Defined by each compilation of VecKernels.cpp (kernel_table_<CAPABILITY>).
extern const KernelTable kernel_table_DEFAULT;
extern const KernelTable kernel_table_AVX2;
extern const KernelTable kernel_table_AVX512;

}  // namespace at::native::cpu
