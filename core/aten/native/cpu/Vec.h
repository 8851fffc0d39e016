#pragma once

// SIMD vectors of one CPU capability, for the kernel translation unit that is
// compiled once per capability (VecKernels.cpp). GCC/Clang vector extensions:
// the same source becomes SSE2 code in the baseline build, AVX2 and AVX-512
// code in the others, and the vector width follows the compiler's target
// flags. Everything lives in a namespace named after the capability, so no
// two compilations define the same symbol.

#include <cstdint>

#ifndef CPU_CAPABILITY
#error "Vec.h belongs to a kernel translation unit compiled per CPU capability (CPU_CAPABILITY)"
#endif

#if defined(__AVX512F__)
#define TORCH_CPU_VEC_BYTES 64
#elif defined(__AVX2__)
#define TORCH_CPU_VEC_BYTES 32
#else
#define TORCH_CPU_VEC_BYTES 16
#endif

namespace at::native::CPU_CAPABILITY {

constexpr int kVecBytes = TORCH_CPU_VEC_BYTES;

// Vec<T>: a register of T; Mask<T>: what comparing two of them gives.
template <typename T>
struct VecTypes;
template <>
struct VecTypes<float> {
  typedef float vec __attribute__((vector_size(kVecBytes)));
  typedef int32_t mask __attribute__((vector_size(kVecBytes)));
  typedef float half __attribute__((vector_size(kVecBytes / 2)));
};
template <>
struct VecTypes<double> {
  typedef double vec __attribute__((vector_size(kVecBytes)));
  typedef int64_t mask __attribute__((vector_size(kVecBytes)));
};
template <>
struct VecTypes<int64_t> {
  typedef int64_t vec __attribute__((vector_size(kVecBytes)));
  typedef int64_t mask __attribute__((vector_size(kVecBytes)));
};

template <typename T>
using Vec = typename VecTypes<T>::vec;
template <typename T>
using Mask = typename VecTypes<T>::mask;

template <typename T>
constexpr int64_t kLanes = kVecBytes / static_cast<int64_t>(sizeof(T));

// Unaligned loads and stores (memcpy compiles to one vector move), and the
// partial ones a loop's tail uses: lanes past `n` read as zero, are not written.
template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

template <typename T>
inline Vec<T> load_partial(const T* p, int64_t n) {
  Vec<T> v = {};
  __builtin_memcpy(&v, p, static_cast<unsigned long>(n) * sizeof(T));
  return v;
}

template <typename T>
inline void store(T* p, Vec<T> v) {
  __builtin_memcpy(p, &v, sizeof(v));
}

template <typename T>
inline void store_partial(T* p, Vec<T> v, int64_t n) {
  __builtin_memcpy(p, &v, static_cast<unsigned long>(n) * sizeof(T));
}

template <typename T>
inline Vec<T> splat(T x) {
  Vec<T> v = {};
  return v + x;
}

// Lanes compare as all-ones (true) or zero; select picks lane by lane.
template <typename T>
inline Vec<T> select(Mask<T> m, Vec<T> a, Vec<T> b) {
  return m ? a : b;
}

// NaN-propagating maximum, lane by lane (for a scalar too): `a > b ? a : b`
// keeps b when either is NaN, so a NaN in b survives and a NaN in a is caught
// by the caller's NaN mask.
template <typename V>
inline V maximum(V a, V b) {
  return a > b ? a : b;
}

template <typename T>
inline T scalar_max(T a, T b) {
  return a > b ? a : b;
}

template <typename T>
inline T scalar_min(T a, T b) {
  return a < b ? a : b;
}

// Sum of the lanes (in double for floating types).
inline double reduce_add(Vec<float> v) {
  double s = 0;
  for (int64_t i = 0; i < kLanes<float>; ++i) s += static_cast<double>(v[i]);
  return s;
}

inline double reduce_add(Vec<double> v) {
  double s = 0;
  for (int64_t i = 0; i < kLanes<double>; ++i) s += v[i];
  return s;
}

inline int64_t reduce_add(Vec<int64_t> v) {
  int64_t s = 0;
  for (int64_t i = 0; i < kLanes<int64_t>; ++i) s += v[i];
  return s;
}

template <typename T>
inline T reduce_max(Vec<T> v) {
  T best = v[0];
  for (int64_t i = 1; i < kLanes<T>; ++i) best = scalar_max(best, static_cast<T>(v[i]));
  return best;
}

// Any lane set (for a comparison's result).
template <typename M>
inline bool any(M m) {
  for (int64_t i = 0; i < static_cast<int64_t>(sizeof(M) / sizeof(m[0])); ++i) {
    if (m[i]) return true;
  }
  return false;
}

}  // namespace at::native::CPU_CAPABILITY
