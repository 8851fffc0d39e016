#include "torch_cuda/csrc/jit/Nvrtc.h"

#include "torch_cuda/csrc/framework/DynamicLibrary.h"


#include <mutex>

#if defined(CUDA_WHEELS_HAVE_NVRTC)
#include <nvrtc.h>
#endif

namespace torch_cuda::jit {

#if defined(CUDA_WHEELS_HAVE_NVRTC)
namespace {

// The entry points, typed by the wheel's own header.
struct NvrtcApi {
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) num_supported_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) supported_archs = nullptr;
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
};

std::mutex g_mutex;
NvrtcApi g_api;
bool g_loaded = false;

const NvrtcApi& api() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_loaded) {
    throw std::runtime_error(
        "NVRTC is not loaded: torch_cuda.jit loads it from the nvidia-cuda-nvrtc wheel "
        "(torch_cuda.jit.load_nvrtc())");
  }
  return g_api;
}

void check(const NvrtcApi& a, nvrtcResult result, const char* call) {
  if (result != NVRTC_SUCCESS) {
    throw NvrtcError(std::string(call) + " failed: " + a.error_string(result));
  }
}

// Frees the program on every path.
struct Program {
  const NvrtcApi& a;
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle != nullptr) {
      a.destroy_program(&handle);
    }
  }
};

}  // namespace

void load_nvrtc(const std::string& library, const std::vector<std::string>& preload) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_loaded) {
    return;
  }
  for (const std::string& path : preload) {
    // NVRTC dlopens libnvrtc-builtins by soname; a global, already loaded
    // copy is what it then finds (the wheel sets no RUNPATH for it).
    const DynamicLibrary builtins("NVRTC builtins", path, /*global=*/true);
  }
  const DynamicLibrary lib("NVRTC", library);
  NvrtcApi a;
  lib.bind(a.version, "nvrtcVersion");
  lib.bind(a.num_supported_archs, "nvrtcGetNumSupportedArchs");
  lib.bind(a.supported_archs, "nvrtcGetSupportedArchs");
  lib.bind(a.create_program, "nvrtcCreateProgram");
  lib.bind(a.destroy_program, "nvrtcDestroyProgram");
  lib.bind(a.compile_program, "nvrtcCompileProgram");
  lib.bind(a.log_size, "nvrtcGetProgramLogSize");
  lib.bind(a.log, "nvrtcGetProgramLog");
  lib.bind(a.ptx_size, "nvrtcGetPTXSize");
  lib.bind(a.ptx, "nvrtcGetPTX");
  lib.bind(a.cubin_size, "nvrtcGetCUBINSize");
  lib.bind(a.cubin, "nvrtcGetCUBIN");
  lib.bind(a.error_string, "nvrtcGetErrorString");
  g_api = a;
  g_loaded = true;  // the handle stays open for the life of the process
}

bool nvrtc_loaded() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_loaded;
}

bool nvrtc_headers_available() { return true; }

std::pair<int, int> nvrtc_version() {
  const NvrtcApi& a = api();
  int major = 0;
  int minor = 0;
  check(a, a.version(&major, &minor), "nvrtcVersion");
  return {major, minor};
}

std::vector<int> nvrtc_supported_archs() {
  const NvrtcApi& a = api();
  int count = 0;
  check(a, a.num_supported_archs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  if (count > 0) {
    check(a, a.supported_archs(archs.data()), "nvrtcGetSupportedArchs");
  }
  return archs;
}

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& program_name,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          const std::vector<std::string>& options) {
  const NvrtcApi& a = api();
  std::vector<const char*> header_sources;
  std::vector<const char*> header_names;
  for (const auto& [name, content] : headers) {
    header_names.push_back(name.c_str());
    header_sources.push_back(content.c_str());
  }
  Program program{a};
  check(a,
        a.create_program(&program.handle, source.c_str(), program_name.c_str(), static_cast<int>(headers.size()),
                         header_sources.data(), header_names.data()),
        "nvrtcCreateProgram");
  std::vector<const char*> argv;
  for (const std::string& option : options) {
    argv.push_back(option.c_str());
  }
  const nvrtcResult compiled = a.compile_program(program.handle, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  size_t size = 0;
  check(a, a.log_size(program.handle, &size), "nvrtcGetProgramLogSize");
  if (size > 1) {
    out.log.resize(size);
    check(a, a.log(program.handle, out.log.data()), "nvrtcGetProgramLog");
    out.log.resize(size - 1);  // drop the terminating NUL
  }
  if (compiled != NVRTC_SUCCESS) {
    std::string options_text;
    for (const std::string& option : options) {
      options_text += " " + option;
    }
    throw NvrtcError("NVRTC could not compile " + program_name + " (" + a.error_string(compiled) +
                     "; options:" + options_text + "):\n" + out.log);
  }
  check(a, a.ptx_size(program.handle, &size), "nvrtcGetPTXSize");
  out.ptx.resize(size);
  check(a, a.ptx(program.handle, out.ptx.data()), "nvrtcGetPTX");
  if (!out.ptx.empty() && out.ptx.back() == '\0') {
    out.ptx.pop_back();
  }
  // A cubin exists only for a real architecture (sm_XX); for compute_XX
  // NVRTC reports size 0 (or an error, in older versions): PTX only then.
  if (a.cubin_size(program.handle, &size) == NVRTC_SUCCESS && size > 0) {
    out.cubin.resize(size);
    check(a, a.cubin(program.handle, out.cubin.data()), "nvrtcGetCUBIN");
  }
  return out;
}

#else  // built without the nvidia-cuda-nvrtc wheel's header

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "torch_cuda was built without NVRTC's header: the nvidia-cuda-nvrtc wheel was not installed "
      "for the build's Python (run tools/dev bootstrap, then rebuild)");
}
}  // namespace

void load_nvrtc(const std::string&, const std::vector<std::string>&) { unavailable(); }
bool nvrtc_loaded() { return false; }
bool nvrtc_headers_available() { return false; }
std::pair<int, int> nvrtc_version() { unavailable(); }
std::vector<int> nvrtc_supported_archs() { unavailable(); }
NvrtcOutput nvrtc_compile(const std::string&, const std::string&,
                          const std::vector<std::pair<std::string, std::string>>&,
                          const std::vector<std::string>&) {
  unavailable();
}

#endif

}  // namespace torch_cuda::jit
