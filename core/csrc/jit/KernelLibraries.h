#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "csrc/jit/FusedFunction.h"

namespace torch_core::jit {

// Shared objects of compiled fused kernels, loaded once per path and never
// unloaded: their functions stay registered with the dispatcher for the life
// of the process (kernels are never removed from it either).
class KernelLibraries {
 public:
  static KernelLibraries& instance();

  // dlopens `path` (once) and returns its `symbol`. Throws std::runtime_error
  // with the loader's message when either is missing.
  FusedFunction load(const std::string& path, const std::string& symbol);

 private:
  KernelLibraries() = default;

  std::mutex mutex_;
  std::map<std::string, void*> handles_;  // by path
};

}  // namespace torch_core::jit
