#include "torch_cuda/csrc/profiler/NvtxRange.h"

#include <nvtx3/nvToolsExt.h>

#include <stdexcept>

namespace torch_cuda::profiler {
namespace {
thread_local int depth = 0;
}  // namespace

int push_range(const std::string& name) {
  nvtxRangePushA(name.c_str());
  return ++depth;
}

int pop_range() {
  if (depth == 0) {
    throw std::logic_error("pop_range: no NVTX range is open on this thread");
  }
  nvtxRangePop();
  return --depth;
}

int range_depth() { return depth; }

}  // namespace torch_cuda::profiler
