#include "torch_cuda/csrc/jit/KernelSource.h"

#include <cctype>
#include <set>
#include <stdexcept>

namespace torch_cuda::jit {
namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void validate_name(const std::string& name) {
  if (name.empty() || !is_identifier_start(name[0])) {
    throw std::invalid_argument("kernel name '" + name + "' is not a C identifier");
  }
  for (char c : name) {
    if (!is_identifier_char(c)) {
      throw std::invalid_argument("kernel name '" + name + "' is not a C identifier");
    }
  }
}

void validate_expression(const std::string& expression, int num_inputs) {
  static const std::set<std::string> kFunctions = {"expf", "tanhf", "fmaxf", "fminf"};
  std::set<std::string> inputs;
  for (int i = 0; i < num_inputs; ++i) {
    inputs.insert("in" + std::to_string(i));
  }
  size_t i = 0;
  while (i < expression.size()) {
    const char c = expression[i];
    if (std::isspace(static_cast<unsigned char>(c)) || std::string("+-*/(),").find(c) != std::string::npos) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < expression.size() &&
             (std::isdigit(static_cast<unsigned char>(expression[i])) || expression[i] == '.' ||
              expression[i] == 'f' || expression[i] == 'e')) {
        ++i;
      }
    } else if (is_identifier_start(c)) {
      const size_t start = i;
      while (i < expression.size() && is_identifier_char(expression[i])) {
        ++i;
      }
      const std::string word = expression.substr(start, i - start);
      if (!inputs.count(word) && !kFunctions.count(word)) {
        throw std::invalid_argument("element-wise expression uses '" + word +
                                    "', which is neither an input (in0..in" +
                                    std::to_string(num_inputs - 1) + ") nor an allowed function");
      }
    } else {
      throw std::invalid_argument(std::string("element-wise expression has unexpected character '") +
                                  c + "'");
    }
  }
}

}  // namespace

std::string elementwise_kernel_source(const std::string& name, int num_inputs,
                                      const std::string& expression) {
  if (num_inputs < 1) {
    throw std::invalid_argument("an element-wise kernel needs at least one input");
  }
  validate_name(name);
  validate_expression(expression, num_inputs);
  std::string params;
  std::string loads;
  for (int i = 0; i < num_inputs; ++i) {
    const std::string input = "in" + std::to_string(i);
    params += "const float* __restrict__ " + input + "_ptr, ";
    loads += "    const float " + input + " = " + input + "_ptr[i];\n";
  }
  return "extern \"C\" __global__ void " + name + "(" + params +
         "float* __restrict__ out, long long n) {\n"
         "  const long long stride = (long long)blockDim.x * gridDim.x;\n"
         "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n" +
         loads + "    out[i] = " + expression + ";\n  }\n}\n";
}

}  // namespace torch_cuda::jit
