#pragma once

#include <optional>
#include <string>

#include "aten/Tensor.h"

namespace at {

// A Python number: its kind decides type promotion, as in PyTorch
// (int64 tensor + 2.5 -> float32; bool tensor + 1 -> int64).
struct Scalar {
  enum class Kind { Bool, Int, Float };
  double value;
  Kind kind;
};

// -- creation ------------------------------------------------------------------
Tensor empty(const Shape& shape, ScalarType dtype, const Device& device);
Tensor full(const Shape& shape, double value, ScalarType dtype, const Device& device);
Tensor arange(double start, double end, double step, ScalarType dtype, const Device& device);
// Copies `shape`'s worth of host data of `dtype` onto `device`.
Tensor from_host(const void* data, const Shape& shape, ScalarType dtype, const Device& device);
// Copies the tensor's data into host memory (waits for the work producing it).
void copy_to_host(const Tensor& t, void* dst);

// -- conversion ------------------------------------------------------------------
Tensor to(const Tensor& t, const Device& device);
Tensor to(const Tensor& t, ScalarType dtype);

// -- ops -------------------------------------------------------------------------
// op: "add", "sub", "mul", "div" (true division).
Tensor binary(const std::string& op, const Tensor& a, const Tensor& b);
// `reverse` computes scalar (op) a, for Python's __rsub__ and friends.
Tensor binary(const std::string& op, const Tensor& a, const Scalar& b, bool reverse = false);
// op: "neg", "relu", "exp", "tanh".
Tensor unary(const std::string& op, const Tensor& a);
Tensor sum(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor mean(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Values only (PyTorch's max(dim) also returns indices).
Tensor max(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor softmax(const Tensor& a, int64_t dim);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor& fill_(Tensor& t, double value);
Tensor& copy_(Tensor& dst, const Tensor& src);

// The broadcast shape of two shapes (NumPy rules); `op` names the caller in errors.
Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b);
std::string shape_str(const Shape& shape);

}  // namespace at
