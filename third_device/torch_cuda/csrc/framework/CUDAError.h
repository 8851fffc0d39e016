#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace torch_cuda {

// A failed CUDA runtime call. The message carries the error's name
// (cudaErrorNoDevice, cudaErrorInsufficientDriver, ...) so users can tell
// "no GPU" from "no driver" from a real fault.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& call);
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// "cudaErrorNoDevice (100): no CUDA-capable device is detected".
std::string describe(cudaError_t code);

// Throws CudaError naming `call` when `code` is not cudaSuccess.
void check(cudaError_t code, const char* call);

// For calls whose failure is deliberately ignored (cleanup on a best-effort
// path): clears the per-thread last error such a failure sets, so the next
// launch check does not blame an unrelated kernel for it.
void ignore_error(cudaError_t code) noexcept;

}  // namespace torch_cuda

#define TORCH_CUDA_CHECK(expr) ::torch_cuda::check((expr), #expr)
