#pragma once

#include "c10/core/Device.h"

namespace torch_cuda {

// Registers a CUDA kernel for every op core defines (add sub mul div neg relu
// exp tanh copy fill sum max softmax matmul) under the "cuda" device type.
// Each runs on its call's device and is queued on the call's stream.
void register_cuda_kernels(c10::DeviceTypeId cuda);

}  // namespace torch_cuda
