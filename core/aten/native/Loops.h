#pragma once

#include <cstdint>
#include <vector>

#include "aten/Tensor.h"

namespace at::native {

// Visits every element of `shape` in row-major order, calling
// f(linear_index, offset_a, offset_b) with each operand's element offset
// given its strides over `shape` (0 where it is broadcast). The common case,
// both operands dense with the output's shape, is one plain loop.
template <typename F>
void for_each_broadcast2(const Shape& shape, const Shape& sa, const Shape& sb, F&& f) {
  const int64_t n = numel_of(shape);
  const Shape dense = contiguous_strides(shape);
  if (sa == dense && sb == dense) {
    for (int64_t i = 0; i < n; ++i) {
      f(i, i, i);
    }
    return;
  }
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(nd, 0);
  int64_t oa = 0;
  int64_t ob = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, oa, ob);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (shape[d] - 1);
      ob -= sb[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

template <typename F>
void for_each_broadcast1(const Shape& shape, const Shape& sa, F&& f) {
  for_each_broadcast2(shape, sa, sa, [&](int64_t i, int64_t oa, int64_t) { f(i, oa); });
}

}  // namespace at::native
