#pragma once

#include "c10/core/Device.h"

namespace torch_cuda {

// Registers CUDA's profiler stubs with core: a mark is a CUDA event recorded
// on the kernel's stream, converted to the host's steady clock through an
// anchor event recorded at a known host time; record_function() ranges
// become NVTX ranges for Nsight Systems.
void register_cuda_profiler(c10::DeviceTypeId cuda);

}  // namespace torch_cuda
