// torch_emu._EMUC: the emulated accelerator's Python extension. Importing it
// registers the "emu" device type and its kernels with core.
#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "c10/core/Device.h"
#include "c10/core/RegistrationSite.h"
#include "torch_emu/csrc/aten/EmuKernels.h"
#include "torch_emu/csrc/framework/EmuDriver.h"
#include "torch_emu/csrc/framework/EmuHooks.h"
#include "torch_emu/csrc/jit/EmuFusedLauncher.h"
#include "torch_emu/csrc/profiler/EmuProfilerStubs.h"
#include "torch_emu/csrc/pybinding/DistributedBindings.h"

namespace py = pybind11;

namespace {

// Holds a stream at a point until the host opens it: tests use it to order
// work deterministically, without relying on timing.
class Gate {
 public:
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    opened_cv_.wait(lock, [this] { return open_; });
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    opened_cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_cv_;
  bool open_ = false;
};

torch_emu::EmuDriver& driver() { return torch_emu::EmuDriver::instance(); }

}  // namespace

PYBIND11_MODULE(_EMUC, m) {
  m.doc() = "torch_emu's emulated accelerator runtime";
  static const c10::DeviceTypeId emu = [] {
    c10::RegistrationSite site("torch_emu");
    const c10::DeviceTypeId id = torch_emu::register_emu_device_type();
    torch_emu::register_emu_kernels(id);
    torch_emu::register_emu_profiler(id);
    torch_emu::register_emu_fused_launcher(id);
    return id;
  }();
  m.attr("device_type_id") = emu;
  torch_emu::python::init_distributed_bindings(m);

  m.def("_set_memory_limit", [](int device, size_t bytes) { driver().set_memory_limit(device, bytes); },
        py::arg("device"), py::arg("bytes"), "Caps a device's heap (bytes), e.g. to test out-of-memory.");
  m.def("_memory_limit", [](int device) { return driver().memory_limit(device); }, py::arg("device"));
  m.def("_memory_used", [](int device) { return driver().memory_used(device); }, py::arg("device"),
        "Bytes the device's heap has handed out (the caching allocator's segments).");
  m.def("_is_device_address", [](uintptr_t ptr) {
    return torch_emu::EmuDriver::is_device_address(reinterpret_cast<void*>(ptr));
  });

  m.def(
      "_sleep",
      [](int device, int64_t stream, double milliseconds) {
        driver().launch(c10::Stream{c10::Device(emu, static_cast<c10::DeviceIndex>(device)), stream}, [milliseconds] {
          std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(milliseconds));
        });
      },
      py::arg("device"), py::arg("stream"), py::arg("milliseconds"),
      "Queues a kernel that keeps the stream busy (like torch.cuda._sleep).");

  m.def("_launch_blocking", [] { return driver().launch_blocking(); },
        "Whether every launch waits for its kernel (TORCH_EMU_LAUNCH_BLOCKING=1).");

  m.def("_queued_tasks", [](int device, int64_t stream) { return driver().stream(device, stream).queued(); },
        py::arg("device"), py::arg("stream"), "Tasks queued on a stream and not yet started.");

  py::class_<Gate, std::shared_ptr<Gate>>(m, "_Gate").def("open", &Gate::open);
  m.def(
      "_block_stream",
      [](int device, int64_t stream) {
        if (driver().launch_blocking()) {
          // The launch would wait for a gate only the caller can open.
          throw std::runtime_error(
              "emu: cannot hold a stream with TORCH_EMU_LAUNCH_BLOCKING=1 (every launch waits for its "
              "work); a test that holds a stream checks asynchrony: mark it `asynchronous`");
        }
        auto gate = std::make_shared<Gate>();
        driver().stream(device, stream).enqueue([gate] { gate->wait(); });
        return gate;
      },
      py::arg("device"), py::arg("stream"), "Queues a kernel that waits until the returned gate opens.");
}
