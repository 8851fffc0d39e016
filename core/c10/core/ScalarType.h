#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace c10 {

enum class ScalarType : int8_t { Bool, Int64, Float32, Float64 };

inline size_t itemsize(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return 1;
    case ScalarType::Int64:
      return 8;
    case ScalarType::Float32:
      return 4;
    case ScalarType::Float64:
      return 8;
  }
  throw std::invalid_argument("unknown dtype");
}

inline const char* name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::Int64:
      return "int64";
    case ScalarType::Float32:
      return "float32";
    case ScalarType::Float64:
      return "float64";
  }
  return "unknown";
}

inline bool is_floating(ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; }

// PyTorch's promotion lattice for these dtypes: bool < int64 < float32 < float64.
inline ScalarType promote(ScalarType a, ScalarType b) { return a > b ? a : b; }

// Calls f(T{}) with the C++ type of `t`; `op` names the caller in errors.
template <typename F>
decltype(auto) dispatch_dtype(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool:
      return f(bool{});
    case ScalarType::Int64:
      return f(int64_t{});
    case ScalarType::Float32:
      return f(float{});
    case ScalarType::Float64:
      return f(double{});
  }
  throw std::invalid_argument("unknown dtype");
}

}  // namespace c10
