// (Batched) matmul on CUDA: a tiled shared-memory kernel.
//
// A block computes a 32 x 32 tile of out with 32 x 8 threads, each thread
// four rows of one column; both operands pass through shared memory in
// 32 x 32 tiles, read from global memory in coalesced rows. Accumulation is
// in the operands' type (float32 FMAs like cuBLAS's SGEMM without TF32, exact
// int64, float64), so TF32 is never used whatever
// torch_cuda.backends.matmul.allow_tf32 says.
//
// Why not cuBLAS: the nvidia-cublas wheel is several hundred MB for a
// dependency that covers float32/float64 only (int64 would still need this
// kernel), and nothing else in torch_cuda needs it; it is the natural next
// step once large float GEMMs matter more than build and download size.

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "torch_cuda/csrc/aten/native/LaunchConfig.cuh"
#include "torch_cuda/csrc/aten/native/Launchers.h"

namespace torch_cuda::native {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;
constexpr int kThreadRows = kTile / kRowsPerThread;  // 8

template <typename T>
__global__ void matmul_kernel(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t k, int64_t n,
                              int64_t a_batch_stride, int64_t b_batch_stride) {
  // +1 column: no shared-memory bank conflicts when a tile is read by column.
  __shared__ T a_tile[kTile][kTile + 1];
  __shared__ T b_tile[kTile][kTile + 1];
  const int tx = threadIdx.x;  // column within the tile
  const int ty = threadIdx.y;  // first of this thread's rows
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  for (int64_t batch_index = blockIdx.z; batch_index < batch; batch_index += gridDim.z) {
    const T* ab = a + batch_index * a_batch_stride;
    const T* bb = b + batch_index * b_batch_stride;
    T acc[kRowsPerThread] = {};
    for (int64_t p0 = 0; p0 < k; p0 += kTile) {
      for (int r = ty; r < kTile; r += kThreadRows) {
        const int64_t ai = row0 + r;
        const int64_t ap = p0 + tx;
        a_tile[r][tx] = ai < m && ap < k ? ab[ai * k + ap] : T(0);
        const int64_t bp = p0 + r;
        b_tile[r][tx] = bp < k && col < n ? bb[bp * n + col] : T(0);
      }
      __syncthreads();
#pragma unroll 8
      for (int q = 0; q < kTile; ++q) {
        const T bv = b_tile[q][tx];
#pragma unroll
        for (int w = 0; w < kRowsPerThread; ++w) {
          acc[w] += a_tile[ty + w * kThreadRows][q] * bv;
        }
      }
      __syncthreads();
    }
    T* ob = out + batch_index * m * n;
#pragma unroll
    for (int w = 0; w < kRowsPerThread; ++w) {
      const int64_t row = row0 + ty + w * kThreadRows;
      if (row < m && col < n) {
        ob[row * n + col] = acc[w];
      }
    }
  }
}

}  // namespace

void matmul(const at::KernelCall& c, cudaStream_t stream) {
  if (c.batch * c.m * c.n == 0) {
    return;
  }
  const dim3 block(kTile, kThreadRows);
  const dim3 grid(static_cast<unsigned>((c.n + kTile - 1) / kTile), static_cast<unsigned>((c.m + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<int64_t>(c.batch, 65535)));
  if (grid.y > 65535) {
    throw std::invalid_argument("CUDA matmul: m = " + std::to_string(c.m) + " exceeds 65535 row tiles");
  }
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw std::invalid_argument("matmul: not supported for bool tensors");
    } else {
      // k == 0 still runs: every output is the empty sum, 0.
      matmul_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(c.inputs[0].data_ptr()),
                                                    static_cast<const T*>(c.inputs[1].data_ptr()),
                                                    static_cast<T*>(c.out.data_ptr()), c.batch, c.m, c.k, c.n,
                                                    c.a_batch_stride, c.b_batch_stride);
    }
  });
  TORCH_CUDA_CHECK_LAUNCH();
}

}  // namespace torch_cuda::native
