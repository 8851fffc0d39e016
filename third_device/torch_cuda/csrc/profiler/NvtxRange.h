#pragma once

#include <string>

namespace torch_cuda::profiler {

// NVTX ranges, so Nsight Systems shows record_function() scopes on the
// timeline. Without an attached tool NVTX calls are no-ops; the nesting depth
// is tracked here per thread so callers can check balance either way.
int push_range(const std::string& name);  // returns the new depth (1 for outermost)
int pop_range();                          // returns the depth after popping; throws if none open
int range_depth();

}  // namespace torch_cuda::profiler
