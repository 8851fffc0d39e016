#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace torch_cuda::native {

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum };

// out[i] = op(a[i], b[i]) for i < n, queued on `stream` of the current
// device. Pointers are device memory; out may alias a (an in-place update, as
// collectives use it). Tensors go through core's dispatcher instead
// (Launchers.h); this raw-pointer entry point serves the distributed module.
void launch_binary(BinaryOp op, const float* a, const float* b, float* out, int64_t n,
                   cudaStream_t stream);

}  // namespace torch_cuda::native
