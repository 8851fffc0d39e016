#pragma once

// CPU-capability dispatch, as ATen's DispatchStub does it: the kernels of
// VecKernels.cpp are compiled once per instruction set, and the best one this
// CPU supports is picked at run time (once), unless TORCH_CORE_CPU_CAPABILITY
// names another.

#include <vector>

#include "aten/native/cpu/KernelTable.h"

namespace at::native::cpu {

// In increasing order; each runs on every CPU that runs the next.
enum class CpuCapability { Default, AVX2, AVX512 };

constexpr const char* kCpuCapabilityEnv = "TORCH_CORE_CPU_CAPABILITY";

// "default" (baseline x86-64: SSE2), "avx2" (with FMA), "avx512" (F, BW, VL, DQ).
const char* capability_name(CpuCapability capability);

// The levels this CPU and its OS support, lowest first.
std::vector<CpuCapability> supported_cpu_capabilities();

// The level in use: the one TORCH_CORE_CPU_CAPABILITY names, else the best
// supported. Throws std::invalid_argument, naming the variable, for an unknown
// name or a level this CPU lacks.
CpuCapability cpu_capability();

// The kernels compiled for cpu_capability().
const KernelTable& cpu_kernel_table();

}  // namespace at::native::cpu
