#include "torch_cuda/csrc/framework/DynamicLibrary.h"

#include <dlfcn.h>

#include <stdexcept>
#include <utility>

namespace torch_cuda {

DynamicLibrary::DynamicLibrary(std::string what, std::string path, bool global)
    : what_(std::move(what)), path_(std::move(path)) {
  handle_ = dlopen(path_.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (handle_ == nullptr) {
    const char* error = dlerror();
    throw std::runtime_error("cannot load " + what_ + " '" + path_ + "': " + (error != nullptr ? error : "unknown error"));
  }
}

void* DynamicLibrary::address(const char* symbol) const {
  dlerror();
  void* found = dlsym(handle_, symbol);
  if (found == nullptr) {
    throw std::runtime_error(what_ + " library '" + path_ + "' has no symbol " + symbol);
  }
  return found;
}

}  // namespace torch_cuda
