#include "torch_emu/csrc/framework/EmuHooks.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "torch_emu/csrc/framework/EmuDriver.h"

namespace torch_emu {
namespace {

// Core's view of the emulated driver.
class EmuHooks final : public c10::DeviceHooks {
 public:
  bool is_available() const override { return driver().device_count() > 0; }
  c10::DeviceIndex device_count() const override {
    return static_cast<c10::DeviceIndex>(driver().device_count());
  }
  c10::DeviceIndex current_device() const override { return current(); }
  void set_device(c10::DeviceIndex index) override {
    require(index);
    current() = index;
  }
  void synchronize(c10::DeviceIndex index) override {
    require(index);
    driver().synchronize_device(index);
  }
  std::string unavailable_reason() const override {
    if (!driver().configuration_error().empty()) {
      return driver().configuration_error();
    }
    return driver().device_count() == 0 ? "TORCH_EMU_DEVICES=0" : "";
  }

  void* raw_allocate(size_t bytes, c10::DeviceIndex index) override { return driver().malloc(index, bytes); }
  void raw_free(void* ptr, c10::DeviceIndex index) override { driver().free(index, ptr); }

  void copy_from_host(void* dst, const void* host_src, size_t bytes, const c10::Stream& stream) override {
    driver().memcpy_htod(dst, host_src, bytes, stream);
  }
  void copy_to_host(void* host_dst, const void* src, size_t bytes, const c10::Stream& stream) override {
    driver().memcpy_dtoh(host_dst, src, bytes, stream);
  }
  bool copy_between_devices(void* dst, const c10::Device& dst_device, const void* src,
                            const c10::Device& src_device, size_t bytes) override {
    driver().memcpy_dtod(dst, c10::current_stream(dst_device), src, c10::current_stream(src_device), bytes);
    return true;
  }

  c10::StreamId create_stream(c10::DeviceIndex index) override { return driver().create_stream(index); }
  bool query_stream(const c10::Stream& s) override { return driver().stream(s.device.index(), s.id).idle(); }
  void synchronize_stream(const c10::Stream& s) override { driver().stream(s.device.index(), s.id).synchronize(); }
  c10::EventId create_event(c10::DeviceIndex, c10::EventFlag) override { return driver().create_event(); }
  void destroy_event(c10::EventId event, c10::DeviceIndex) override { driver().destroy_event(event); }
  void record_event(c10::EventId event, const c10::Stream& s) override {
    driver().record_event(event, s.device.index(), s.id);
  }
  bool query_event(c10::EventId event, c10::DeviceIndex) override { return driver().query_event(event); }
  void synchronize_event(c10::EventId event, c10::DeviceIndex) override { driver().synchronize_event(event); }
  void stream_wait_event(const c10::Stream& s, c10::EventId event) override {
    driver().stream_wait_event(s.device.index(), s.id, event);
  }
  double elapsed_ms(c10::EventId start, c10::EventId end, c10::DeviceIndex) override {
    return driver().elapsed_ms(start, end);
  }

 private:
  static EmuDriver& driver() { return EmuDriver::instance(); }
  // The current device is per thread, as with CUDA.
  static c10::DeviceIndex& current() {
    thread_local c10::DeviceIndex index = 0;
    return index;
  }
  void require(c10::DeviceIndex index) const {
    if (index < 0 || index >= device_count()) {
      throw std::out_of_range("emu:" + std::to_string(index) + " does not exist: there are " +
                              std::to_string(device_count()) + " emu device(s)");
    }
  }
};

}  // namespace

c10::DeviceTypeId register_emu_device_type() {
  static const c10::DeviceTypeId id =
      c10::DeviceRegistry::instance().register_device_type("emu", std::make_unique<EmuHooks>());
  return id;
}

}  // namespace torch_emu
