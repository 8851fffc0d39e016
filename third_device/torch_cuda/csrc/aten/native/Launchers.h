#pragma once

// The CUDA launchers of core's ops (compiled by nvcc in the .cu files of this
// directory; called by CUDAKernels.cpp, which registers them with core's
// dispatcher). Each queues its kernel(s) on `stream` and returns without
// waiting; the caller has made the call's device current. Semantics are
// core's (aten/native/Kernels.h): the call carries operands, broadcast
// strides and the reduction or matmul geometry.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "aten/KernelCall.h"
#include "aten/native/Kernels.h"

namespace torch_cuda::native {

void binary(at::native::BinaryKind kind, const at::KernelCall& call, cudaStream_t stream);
void unary(at::native::UnaryKind kind, const at::KernelCall& call, cudaStream_t stream);
void copy(const at::KernelCall& call, cudaStream_t stream);
void fill(const at::KernelCall& call, cudaStream_t stream);
void sum(const at::KernelCall& call, cudaStream_t stream);
void max(const at::KernelCall& call, cudaStream_t stream);
void softmax(const at::KernelCall& call, cudaStream_t stream);
void matmul(const at::KernelCall& call, cudaStream_t stream);

// Keeps `stream` busy for about `cycles` GPU clock cycles (torch.cuda._sleep):
// tests use it to hold work back and observe stream ordering.
void sleep_cycles(int64_t cycles, cudaStream_t stream);

}  // namespace torch_cuda::native
