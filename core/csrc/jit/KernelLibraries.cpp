#include "csrc/jit/KernelLibraries.h"

#include <dlfcn.h>

#include <stdexcept>

namespace torch_core::jit {

KernelLibraries& KernelLibraries::instance() {
  static auto* libraries = new KernelLibraries();
  return *libraries;
}

FusedFunction KernelLibraries::load(const std::string& path, const std::string& symbol) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = handles_.find(path);
  if (it == handles_.end()) {
    // RTLD_LOCAL: every kernel library exports only its own fused_<hash>,
    // and none should resolve another's symbols.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      throw std::runtime_error("jit: cannot load fused kernel library '" + path + "': " +
                               (error != nullptr ? error : "unknown error"));
    }
    it = handles_.emplace(path, handle).first;
  }
  dlerror();  // clear, so a null symbol is told apart from an error
  void* address = dlsym(it->second, symbol.c_str());
  if (address == nullptr) {
    throw std::runtime_error("jit: fused kernel library '" + path + "' has no symbol '" + symbol + "'");
  }
  return reinterpret_cast<FusedFunction>(address);
}

}  // namespace torch_core::jit
