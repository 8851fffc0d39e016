#include "torch_cuda/csrc/distributed/Reduce.h"

#include <stdexcept>

#include "torch_cuda/csrc/aten/native/BinaryKernels.h"

namespace torch_cuda::distributed {

ReduceOp parse_reduce_op(const std::string& name) {
  if (name == "sum") return ReduceOp::Sum;
  if (name == "max") return ReduceOp::Max;
  if (name == "min") return ReduceOp::Min;
  throw std::invalid_argument("unknown reduce op '" + name + "' (expected sum, max or min)");
}

void reduce_into(ReduceOp op, float* acc, const float* incoming, int64_t n, cudaStream_t stream) {
  // The combine step is aten's element-wise kernel run in place.
  const native::BinaryOp binary = op == ReduceOp::Sum   ? native::BinaryOp::Add
                                  : op == ReduceOp::Max ? native::BinaryOp::Maximum
                                                        : native::BinaryOp::Minimum;
  native::launch_binary(binary, acc, incoming, acc, n, stream);
}

}  // namespace torch_cuda::distributed
