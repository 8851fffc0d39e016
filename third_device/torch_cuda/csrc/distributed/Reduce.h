#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace torch_cuda::distributed {

enum class ReduceOp { Sum, Max, Min };

// Parses "sum", "max", "min"; throws std::invalid_argument otherwise.
ReduceOp parse_reduce_op(const std::string& name);

// acc[i] = op(acc[i], incoming[i]) on the device, queued on `stream`: the
// combine step of a ring all-reduce or reduce-scatter.
void reduce_into(ReduceOp op, float* acc, const float* incoming, int64_t n, cudaStream_t stream);

}  // namespace torch_cuda::distributed
