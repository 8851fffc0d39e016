#include "torch_cuda/csrc/jit/DriverApi.h"

#include <cuda_runtime_api.h>

#include <stdexcept>

#include "torch_cuda/csrc/framework/CUDAError.h"

namespace torch_cuda::jit {
namespace {

// ABI version of the entry points we ask for (their CUDA 12.0 signatures,
// which <cuda.h> of CUDA 13 declares).
constexpr unsigned int kDriverAbi = 12000;

template <typename Fn>
void resolve(Fn& fn, const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &address, kDriverAbi, cudaEnableDefault, &found);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
    throw std::runtime_error(std::string("CUDA driver API unavailable (looking up ") + symbol +
                             "): " + describe(status));
  }
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    throw std::runtime_error(std::string("the CUDA driver has no ") + symbol +
                             (found == cudaDriverEntryPointVersionNotSufficent
                                  ? " (driver too old for CUDA 12.0 entry points)"
                                  : " (symbol not found)"));
  }
  fn = reinterpret_cast<Fn>(address);
}

}  // namespace

const DriverApi& DriverApi::get() {
  // Resolved once; a failure is thrown to every caller (and retried, since a
  // static initialiser that throws runs again next time).
  static const DriverApi api = [] {
    DriverApi a;
    resolve(a.module_load_data, "cuModuleLoadData");
    resolve(a.module_get_function, "cuModuleGetFunction");
    resolve(a.launch_kernel, "cuLaunchKernel");
    resolve(a.get_error_name, "cuGetErrorName");
    resolve(a.get_error_string, "cuGetErrorString");
    return a;
  }();
  return api;
}

void DriverApi::check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) {
    return;
  }
  const char* name = nullptr;
  const char* text = nullptr;
  get_error_name(result, &name);
  get_error_string(result, &text);
  throw std::runtime_error(std::string(call) + ": " + (name != nullptr ? name : "CUDA_ERROR_?") + " (" +
                           std::to_string(static_cast<int>(result)) + "): " +
                           (text != nullptr ? text : "unknown driver error"));
}

}  // namespace torch_cuda::jit
