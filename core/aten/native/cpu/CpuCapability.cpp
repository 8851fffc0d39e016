#include "aten/native/cpu/CpuCapability.h"

#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace at::native::cpu {
namespace {

constexpr CpuCapability kLevels[] = {CpuCapability::Default, CpuCapability::AVX2, CpuCapability::AVX512};

CpuCapability best_supported() {
#if defined(__x86_64__)
  // libgcc's cpuid reader also checks that the OS saves the wider registers (XGETBV).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma")) {
    return CpuCapability::AVX512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuCapability::AVX2;
  }
#endif
  return CpuCapability::Default;
}

std::string supported_names() {
  std::string out;
  for (CpuCapability level : supported_cpu_capabilities()) {
    out += std::string(out.empty() ? "" : ", ") + capability_name(level);
  }
  return out;
}

CpuCapability choose() {
  const CpuCapability best = best_supported();
  const char* env = std::getenv(kCpuCapabilityEnv);
  if (env == nullptr || *env == '\0') {
    return best;
  }
  std::string wanted(env);
  for (char& ch : wanted) {
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  for (CpuCapability level : kLevels) {
    if (wanted != capability_name(level)) {
      continue;
    }
    if (level > best) {
      throw std::invalid_argument(std::string(kCpuCapabilityEnv) + "=" + env + ": this CPU does not support " +
                                  capability_name(level) + " (it supports " + supported_names() + ")");
    }
    return level;
  }
  throw std::invalid_argument(std::string(kCpuCapabilityEnv) + "=" + env +
                              " is not a CPU capability: choose default, avx2 or avx512");
}

}  // namespace

const char* capability_name(CpuCapability capability) {
  switch (capability) {
    case CpuCapability::Default:
      return "default";
    case CpuCapability::AVX2:
      return "avx2";
    case CpuCapability::AVX512:
      return "avx512";
  }
  return "unknown";
}

std::vector<CpuCapability> supported_cpu_capabilities() {
  std::vector<CpuCapability> out;
  const CpuCapability best = best_supported();
  for (CpuCapability level : kLevels) {
    if (level <= best) {
      out.push_back(level);
    }
  }
  return out;
}

CpuCapability cpu_capability() {
  // Decided once; a bad variable throws here on every call, never half-initialises.
  static const CpuCapability chosen = choose();
  return chosen;
}

const KernelTable& cpu_kernel_table() {
  static const KernelTable* table = [] {
    switch (cpu_capability()) {
      case CpuCapability::AVX512:
        return &kernel_table_AVX512;
      case CpuCapability::AVX2:
        return &kernel_table_AVX2;
      case CpuCapability::Default:
        break;
    }
    return &kernel_table_DEFAULT;
  }();
  return *table;
}

}  // namespace at::native::cpu
