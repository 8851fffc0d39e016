#pragma once

// Vectorised transcendental functions for the per-capability kernels
// (VecKernels.cpp). float32 exp is computed lane-parallel (no libm call per
// element); float64 keeps libm's exp, one lane at a time.

#include "aten/native/cpu/Vec.h"

namespace at::native::CPU_CAPABILITY {

// expf over every lane, within 2 ulp of the correctly rounded result on the
// whole float range: NaN stays NaN, +inf above 88.72, 0 below -103.97, and
// subnormal results where they belong. Cody-Waite range reduction x = n*ln2 + r
// with |r| <= ln2/2, Cephes' degree-6 polynomial for exp(r), then 2^n applied
// in two halves so that n down to -150 scales into the subnormal range.
inline Vec<float> vexp(Vec<float> x) {
  using V = Vec<float>;
  using I = Mask<float>;
  const V hi = splat(88.72283935546875f);
  const V lo = splat(-103.97208404541015625f);
  const I not_nan = x == x;
  V xc = select<float>(x > hi, hi, x);
  xc = select<float>(xc < lo, lo, xc);
  xc = select<float>(not_nan, xc, splat(0.0f));
  // Adding 1.5 * 2^23 rounds to the nearest integer; its low bits hold n.
  const V magic = splat(12582912.0f);
  const V t = xc * 1.44269504088896341f + magic;
  const V n = t - magic;
  // A cast between vector types of one size reinterprets the bits.
  const I ni = (I)t - (I)magic;
  V r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  V y = p * (r * r) + r + 1.0f;
  const I n1 = ni >> 1;
  const I n2 = ni - n1;
  const I e1 = (n1 + 127) << 23;
  const I e2 = (n2 + 127) << 23;
  y = y * (V)e1 * (V)e2;
  y = select<float>(x > hi, splat(__builtin_inff()), y);
  y = select<float>(x < lo, splat(0.0f), y);
  return select<float>(not_nan, y, x);
}

inline Vec<double> vexp(Vec<double> x) {
  for (int64_t i = 0; i < kLanes<double>; ++i) {
    x[i] = __builtin_exp(x[i]);
  }
  return x;
}

inline Vec<float> vtanh(Vec<float> x) {
  for (int64_t i = 0; i < kLanes<float>; ++i) {
    x[i] = __builtin_tanhf(x[i]);
  }
  return x;
}

inline Vec<double> vtanh(Vec<double> x) {
  for (int64_t i = 0; i < kLanes<double>; ++i) {
    x[i] = __builtin_tanh(x[i]);
  }
  return x;
}

}  // namespace at::native::CPU_CAPABILITY
