#pragma once

#include <cuda.h>

#include <string>

namespace torch_cuda::jit {

// The CUDA driver API functions the fuser needs (module loading and launch).
//
// They are looked up through the CUDA runtime (cudaGetDriverEntryPointByVersion)
// rather than linked: the runtime already finds and loads the driver
// (libcuda.so.1) when it initialises, so torch_cuda neither links the
// toolkit's stub libcuda.so (which would make a driver-less machine fail at
// import) nor dlopens the driver a second time. Without a driver the lookup
// fails and the error names the runtime's reason (e.g.
// cudaErrorInsufficientDriver).
struct DriverApi {
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
  decltype(&cuGetErrorString) get_error_string = nullptr;

  // The process's table, resolved on first use; throws std::runtime_error
  // naming the missing driver or symbol.
  static const DriverApi& get();

  // Throws std::runtime_error "<call>: CUDA_ERROR_... (<code>): <description>".
  void check(CUresult result, const char* call) const;
};

}  // namespace torch_cuda::jit
