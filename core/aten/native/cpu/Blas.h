#pragma once

// The CPU BLAS core links (@cpu_blas, pinned by tools/blas/requirements_lock.txt
// and bundled in torch_core's wheel): matmul's float32 and float64 GEMM, and
// the thread count torch_core.set_num_threads sets.

#include <cstdint>
#include <string>

namespace at::native::cpu {

constexpr const char* kBlasEnv = "TORCH_CORE_BLAS";

// Whether matmul calls the BLAS: yes unless TORCH_CORE_BLAS=0 (then the
// blocked kernels of VecKernels.cpp run). Throws std::invalid_argument for a
// value other than 0 or 1.
bool blas_enabled();

// Whether the BLAS takes an m x k by k x n product (its integers are 32-bit).
bool blas_takes(int64_t m, int64_t n, int64_t k);

// c (m x n) = a (m x k) @ b (k x n), row-major and contiguous; needs blas_takes.
void blas_gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
void blas_gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);

// The pinned distribution and version, e.g. "<wheel> 1.2.3".
std::string blas_name();
// The library's own description of its build (kernel chosen for this CPU, threading).
std::string blas_build_config();

// Threads a BLAS call may use (>= 1).
int blas_num_threads();
void set_blas_num_threads(int threads);

}  // namespace at::native::cpu
