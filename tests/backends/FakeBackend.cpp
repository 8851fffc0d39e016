// A second, test-only device backend: "fake", host memory, synchronous, and
// kernels for only a few ops. Loaded beside torch_emu it proves that several
// plugins coexist in one process, and that a missing kernel is reported by op
// and device.
#include <pybind11/pybind11.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "aten/Dispatcher.h"
#include "aten/native/Kernels.h"
#include "c10/core/CpuHooks.h"
#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"
#include "csrc/profiler/ProfilerStubs.h"

namespace {

// Host memory and synchronous execution, like the CPU, but its own device
// type, with three devices and no direct device-to-device copy (core stages
// through the host).
class FakeHooks final : public c10::DeviceHooks {
 public:
  bool is_available() const override { return true; }
  c10::DeviceIndex device_count() const override { return 3; }
  c10::DeviceIndex current_device() const override { return 0; }
  void set_device(c10::DeviceIndex) override {}
  void synchronize(c10::DeviceIndex) override {}
  std::string unavailable_reason() const override { return {}; }
  void* raw_allocate(size_t bytes, c10::DeviceIndex i) override { return host_.raw_allocate(bytes, i); }
  void raw_free(void* p, c10::DeviceIndex i) override { host_.raw_free(p, i); }
  void copy_from_host(void* d, const void* s, size_t n, const c10::Stream&) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n, const c10::Stream&) override { std::memcpy(d, s, n); }
  bool copy_between_devices(void*, const c10::Device&, const void*, const c10::Device&, size_t) override {
    return false;
  }
  c10::StreamId create_stream(c10::DeviceIndex i) override { return host_.create_stream(i); }
  bool query_stream(const c10::Stream&) override { return true; }
  void synchronize_stream(const c10::Stream&) override {}
  c10::EventId create_event(c10::DeviceIndex i, c10::EventFlag f) override { return host_.create_event(i, f); }
  void destroy_event(c10::EventId e, c10::DeviceIndex i) override { host_.destroy_event(e, i); }
  void record_event(c10::EventId e, const c10::Stream& s) override { host_.record_event(e, s); }
  bool query_event(c10::EventId e, c10::DeviceIndex i) override { return host_.query_event(e, i); }
  void synchronize_event(c10::EventId, c10::DeviceIndex) override {}
  void stream_wait_event(const c10::Stream&, c10::EventId) override {}
  double elapsed_ms(c10::EventId a, c10::EventId b, c10::DeviceIndex i) override {
    return host_.elapsed_ms(a, b, i);
  }

 private:
  c10::CpuHooks host_;
};

}  // namespace

PYBIND11_MODULE(_fake_device, m) {
  static const c10::DeviceTypeId fake = [] {
    c10::RegistrationSite site("_fake_device");
    const auto id = c10::DeviceRegistry::instance().register_device_type("fake", std::make_unique<FakeHooks>());
    auto host = [](const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); };
    auto& dispatcher = at::Dispatcher::instance();
    dispatcher.register_kernel("add", id, [host](const at::KernelCall& c) {
      at::native::binary_kernel(at::native::BinaryKind::Add, c, host);
    });
    dispatcher.register_kernel("fill", id, [host](const at::KernelCall& c) { at::native::fill_kernel(c, host); });
    dispatcher.register_kernel("copy", id, [host](const at::KernelCall& c) { at::native::copy_kernel(c, host); });
    return id;
  }();
  m.attr("device_type_id") = fake;

  // Registration as another backend would do it, for the registry-guard tests.
  m.def("_register_device_type_as", [](const std::string& owner, const std::string& name) {
    c10::RegistrationSite site(owner);
    return c10::DeviceRegistry::instance().register_device_type(name, std::make_unique<FakeHooks>());
  });
  m.def("_register_profiler_stubs_as", [](const std::string& owner, const std::string& device_type) {
    c10::RegistrationSite site(owner);
    struct NoStubs final : torch_core::profiler::ProfilerStubs {
      std::shared_ptr<torch_core::profiler::DeviceMark> mark(const c10::Stream&) override { return nullptr; }
    };
    torch_core::profiler::register_profiler_stubs(c10::DeviceRegistry::instance().find(device_type),
                                                  std::make_unique<NoStubs>());
  });
  // Kernel registration and replacement as another backend would do it
  // (docs/adding-a-backend.md, "Replacing one of core's kernels"): a device
  // type with core's shared kernels, then one of them swapped for another body.
  m.def("_register_core_kernels_as", [](const std::string& owner, const std::string& name) {
    c10::RegistrationSite site(owner);
    const auto id = c10::DeviceRegistry::instance().register_device_type(name, std::make_unique<FakeHooks>());
    auto reg = [id](const char* op, at::Kernel kernel) {
      at::Dispatcher::instance().register_kernel(op, id, std::move(kernel));
    };
    auto launch = [](const at::KernelCall& call, auto&& body) {
      body(call, [](const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); });
    };
    at::native::register_core_kernels(reg, launch);
    return id;
  });
  // Registers (or, with override, replaces) `op` with the body of binary op `body` ("add" or "sub").
  m.def(
      "_binary_kernel_as",
      [](const std::string& owner, const std::string& op, const std::string& device_type, const std::string& body,
         bool override) {
        c10::RegistrationSite site(owner);
        const auto kind = body == "sub" ? at::native::BinaryKind::Sub : at::native::BinaryKind::Add;
        at::Kernel kernel = [kind](const at::KernelCall& c) {
          at::native::binary_kernel(kind, c, [](const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); });
        };
        auto& dispatcher = at::Dispatcher::instance();
        const auto type = c10::DeviceRegistry::instance().find(device_type);
        if (override) {
          dispatcher.override_kernel(op, type, std::move(kernel));
        } else {
          dispatcher.register_kernel(op, type, std::move(kernel));
        }
      },
      pybind11::arg("owner"), pybind11::arg("op"), pybind11::arg("device_type"), pybind11::arg("body"),
      pybind11::arg("override") = false);
  m.def("_kernel_owner", [](const std::string& op, const std::string& device_type) {
    return at::Dispatcher::instance().kernel_owner(op, c10::DeviceRegistry::instance().find(device_type));
  });
  m.def("_device_type_owner", [](const std::string& name) {
    return c10::DeviceRegistry::instance().owner(c10::DeviceRegistry::instance().find(name));
  });
}
