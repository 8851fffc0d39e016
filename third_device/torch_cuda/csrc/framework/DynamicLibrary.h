#pragma once

#include <string>

namespace torch_cuda {

// A shared library opened at run time and kept open for the life of the
// process: the NVRTC and NCCL the pinned PyPI wheels install. torch_cuda
// builds against the wheels' headers only, so _CUDAC loads (and says what is
// missing) where a wheel is absent.
class DynamicLibrary {
 public:
  // Opens `path` with RTLD_NOW (and RTLD_GLOBAL when `global`, for libraries
  // others find by soname). Throws std::runtime_error naming `what`, the
  // path and the loader's reason.
  DynamicLibrary(std::string what, std::string path, bool global = false);

  // Points `fn` at `symbol`; throws naming the library and the symbol.
  template <typename Fn>
  void bind(Fn& fn, const char* symbol) const {
    fn = reinterpret_cast<Fn>(address(symbol));
  }

 private:
  void* address(const char* symbol) const;

  std::string what_;
  std::string path_;
  void* handle_;
};

}  // namespace torch_cuda
