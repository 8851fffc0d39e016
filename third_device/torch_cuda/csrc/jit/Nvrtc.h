#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace torch_cuda::jit {

// NVRTC, CUDA's run-time compiler, loaded at run time from the
// nvidia-cuda-nvrtc wheel (torch_cuda.jit finds the library through the
// installed package and calls load_nvrtc). It needs no GPU and no driver.
//
// Why not link it: _CUDAC must import and work without NVRTC (fused
// functions then run eagerly), and the wheel's location belongs to the
// Python environment at run time, not to the build machine.

// NVRTC rejected a program: what() holds NVRTC's error and its full log.
class NvrtcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// dlopens `preload` (RTLD_GLOBAL: libnvrtc-builtins, which NVRTC itself
// dlopens by soname) and then `library`. Idempotent once it succeeded; throws
// std::runtime_error with the loader's message otherwise.
void load_nvrtc(const std::string& library, const std::vector<std::string>& preload);
bool nvrtc_loaded();
// Was torch_cuda built with the wheel's nvrtc.h (the @cuda_wheels repository)?
bool nvrtc_headers_available();

// nvrtcVersion(): {major, minor}, e.g. {13, 0}.
std::pair<int, int> nvrtc_version();
// nvrtcGetSupportedArchs(): e.g. {75, 80, 86, ..., 120}.
std::vector<int> nvrtc_supported_archs();

struct NvrtcOutput {
  std::string ptx;    // always
  std::string cubin;  // when compiled for a real architecture (sm_XX)
  std::string log;    // NVRTC's log (warnings), possibly empty
};

// Compiles one CUDA C++ program. `headers` are in-memory headers (include
// name, content) the program may #include. Throws NvrtcError with the log.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& program_name,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          const std::vector<std::string>& options);

}  // namespace torch_cuda::jit
