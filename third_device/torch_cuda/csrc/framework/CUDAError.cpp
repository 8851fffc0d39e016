#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda {

std::string describe(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + " (" + std::to_string(static_cast<int>(code)) +
         "): " + cudaGetErrorString(code);
}

CudaError::CudaError(cudaError_t code, const std::string& call)
    : std::runtime_error("CUDA call " + call + " failed: " + describe(code)), code_(code) {}

void check(cudaError_t code, const char* call) {
  if (code != cudaSuccess) {
    // Clear the sticky last error so the next unrelated call does not report it.
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    throw CudaError(code, call);
  }
}

void ignore_error(cudaError_t code) noexcept {
  if (code != cudaSuccess) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
  }
}

}  // namespace torch_cuda
