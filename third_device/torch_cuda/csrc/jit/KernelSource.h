#pragma once

#include <string>

namespace torch_cuda::jit {

// CUDA C source of one element-wise kernel:
//   extern "C" __global__ void <name>(const float* in0, ..., float* out, long long n)
// computing out[i] = <expression> over in0..in{num_inputs-1}. The expression
// may use those names, numeric literals, + - * / ( ) and the functions
// expf, tanhf, fmaxf, fminf. Anything else throws std::invalid_argument naming
// the offending token, so generated code never carries injected text.
// This is what the fuser hands to NVRTC at run time.
std::string elementwise_kernel_source(const std::string& name, int num_inputs,
                                      const std::string& expression);

}  // namespace torch_cuda::jit
