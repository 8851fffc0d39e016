#pragma once

#include <cstdint>

namespace torch_core::jit {

// The C ABI of a fused kernel compiled from host C++ (torch_core.jit's host
// code generator): `inputs` holds one host-accessible pointer per tensor
// input of the fused graph, `out` the result's, and `n` the element count of
// the inputs (all fused inputs have one shape). An element-wise graph writes
// n elements; a graph ending in a full reduction writes one.
//
// Plain function pointers, not std::function: the symbol comes from dlopen.
using FusedFunction = void (*)(const void* const* inputs, void* out, int64_t n);

}  // namespace torch_core::jit
