#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace torch_cuda::native {

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum };

// out[i] = op(a[i], b[i]) for i < n, queued on `stream`. Pointers are device
// memory; out may alias a (an in-place update, as collectives use it).
void launch_binary(BinaryOp op, const float* a, const float* b, float* out, int64_t n,
                   cudaStream_t stream);

// Copies a and b to `device`, applies op there, copies the result back.
// A self-contained round trip through the kernel, for tests and bring-up.
std::vector<float> binary_on_device(BinaryOp op, const std::vector<float>& a,
                                    const std::vector<float>& b, int device);

}  // namespace torch_cuda::native
