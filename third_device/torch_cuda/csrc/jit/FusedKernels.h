#pragma once

#include <map>
#include <string>

#include "c10/core/Device.h"

namespace torch_cuda::jit {

// Block sizes the generated kernels are written for (torch_cuda.jit's
// code generator reads them through _CUDAC): element-wise kernels use a
// grid-stride loop over kElementwiseBlock-thread blocks; a graph ending in a
// sum runs as one kReductionBlock-thread block (a deterministic tree
// reduction in double, like core's sum accumulating in double).
constexpr int kElementwiseBlock = 256;
constexpr int kReductionBlock = 1024;

// Registers an NVRTC-compiled fused kernel as dispatcher op `name` for the
// cuda device type. `images` maps a device architecture (major * 10 + minor)
// to the module image (cubin, or PTX the driver compiles) whose entry point is
// `name`, with the signature
//   extern "C" __global__ void name(const T* in0, ..., T* out, long long n).
// Each launch loads the image into the call's device once (cuModuleLoadData),
// then cuLaunchKernel's it on the call's stream. Idempotent per name.
void register_nvrtc_kernel(c10::DeviceTypeId cuda, const std::string& name, std::map<int, std::string> images,
                           bool reduction, int num_inputs);

// Architecture of a CUDA device: major * 10 + minor (90 for an H100).
int device_arch(int device);

}  // namespace torch_cuda::jit
