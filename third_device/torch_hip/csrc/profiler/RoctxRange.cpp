// record_function() ranges for torch_hip, in place of torch_cuda's NVTX ranges
// (NvtxRange.cpp, not translated): hipify maps NVTX to roctracer's roctx, which
// Debian 12 does not package. The translated NvtxRange.h is the interface; the
// nesting depth is kept per thread, so callers check balance as on CUDA, but
// no profiler timeline sees the ranges.
#include <stdexcept>

#include "torch_hip/csrc/profiler/NvtxRange.h"

namespace torch_hip::profiler {
namespace {
thread_local int depth = 0;
}  // namespace

int push_range(const std::string&) { return ++depth; }

int pop_range() {
  if (depth == 0) {
    throw std::logic_error("pop_range: no range is open on this thread");
  }
  return --depth;
}

int range_depth() { return depth; }

}  // namespace torch_hip::profiler
