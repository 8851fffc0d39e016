#pragma once

// Element-wise op math, written once and shared by every device's kernels.
//
// A backend that compiles these functions for its device defines
// TORCH_OP_QUALIFIERS through its own compile flags (e.g. the qualifiers its
// device compiler needs), so core never spells a vendor keyword. On the CPU
// it is empty.
#ifndef TORCH_OP_QUALIFIERS
#define TORCH_OP_QUALIFIERS
#endif

#include <cmath>

namespace at::native::math {

template <typename T>
TORCH_OP_QUALIFIERS inline T add(T a, T b) {
  return a + b;
}

template <typename T>
TORCH_OP_QUALIFIERS inline T sub(T a, T b) {
  return a - b;
}

template <typename T>
TORCH_OP_QUALIFIERS inline T mul(T a, T b) {
  return a * b;
}

template <typename T>
TORCH_OP_QUALIFIERS inline T div(T a, T b) {
  return a / b;
}

// NaN < 0 is false, so NaN passes through (as PyTorch's relu gives NaN).
template <typename T>
TORCH_OP_QUALIFIERS inline T relu(T a) {
  return a < T(0) ? T(0) : a;
}

template <typename T>
TORCH_OP_QUALIFIERS inline T maximum(T a, T b) {
  return a > b ? a : b;
}

template <typename T>
TORCH_OP_QUALIFIERS inline T minimum(T a, T b) {
  return a < b ? a : b;
}

}  // namespace at::native::math

namespace at::native {

// The binary and unary ops, and one switch over the binary ones that every
// device's kernels share. The enumerators' values index the CPU's kernel
// tables (aten/native/cpu/KernelTable.h).
enum class BinaryKind { Add, Sub, Mul, Div };
enum class UnaryKind { Neg, Relu, Exp, Tanh };

template <typename T>
TORCH_OP_QUALIFIERS inline T apply_binary(BinaryKind kind, T a, T b) {
  switch (kind) {
    case BinaryKind::Add:
      return math::add(a, b);
    case BinaryKind::Sub:
      return math::sub(a, b);
    case BinaryKind::Mul:
      return math::mul(a, b);
    case BinaryKind::Div:
      return math::div(a, b);
  }
  return a;
}

}  // namespace at::native
