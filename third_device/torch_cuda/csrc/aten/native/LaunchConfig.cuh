#pragma once

// Launch geometry shared by torch_cuda's kernels.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda::native {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill any current
// GPU many times over; the loop covers whatever a capped grid leaves.
inline unsigned int blocks_for(int64_t n) {
  constexpr int64_t kMaxBlocks = 65535;
  return static_cast<unsigned int>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

// Multiprocessors of the current device, to size grids for reductions.
inline int multiprocessor_count() {
  int device = 0;
  int count = 0;
  TORCH_CUDA_CHECK(cudaGetDevice(&device));
  TORCH_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// Reports a failed launch (bad configuration, no kernel image for this GPU)
// where it happened rather than at the next synchronising call.
#define TORCH_CUDA_CHECK_LAUNCH() TORCH_CUDA_CHECK(cudaGetLastError())

}  // namespace torch_cuda::native
