#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c10/core/Stream.h"
#include "torch_emu/csrc/framework/EmuStream.h"

namespace torch_emu {

// The emulated accelerator's "driver": the hardware the backend programs.
//
// Each device has its own heap. Device addresses are not host addresses:
// they carry a tag that makes them non-canonical on x86-64 and AArch64, so
// dereferencing one on the host faults instead of silently working. Host code
// reaches device memory only through the copy calls below; device code
// (kernels running on a stream's worker) resolves addresses with translate().
class EmuDriver {
 public:
  static constexpr uint64_t kAddressTag = 0xE000000000000000ull;
  static constexpr int kDeviceShift = 44;  // 16 TiB of address space per device

  // The process's emulated hardware, configured from the environment:
  // TORCH_EMU_DEVICES (default 2), TORCH_EMU_MEMORY_LIMIT (bytes per device)
  // and TORCH_EMU_LAUNCH_BLOCKING (0 or 1, default 0).
  static EmuDriver& instance();

  int device_count() const { return static_cast<int>(devices_.size()); }
  // Why no device exists (bad configuration), empty otherwise.
  const std::string& configuration_error() const { return configuration_error_; }

  // -- memory --------------------------------------------------------------------
  // A device address, or nullptr when the device's memory limit is reached.
  void* malloc(int device, size_t bytes);
  void free(int device, void* ptr);
  void set_memory_limit(int device, size_t bytes);
  size_t memory_limit(int device) const;
  size_t memory_used(int device) const;
  static bool is_device_address(const void* ptr);
  // Device code only: the host location behind a device address (nullptr,
  // the storage of an empty tensor, stays nullptr).
  char* translate(const void* device_ptr) const;

  // -- copies: ordered on the stream, complete on return ------------------------
  void memcpy_htod(void* dst, const void* host_src, size_t bytes, const c10::Stream& stream);
  void memcpy_dtoh(void* host_dst, const void* src, size_t bytes, const c10::Stream& stream);
  // After pending work on both devices' given streams.
  void memcpy_dtod(void* dst, const c10::Stream& dst_stream, const void* src, const c10::Stream& src_stream,
                   size_t bytes);

  // -- kernels -------------------------------------------------------------------
  // Queues a kernel on the stream. With TORCH_EMU_LAUNCH_BLOCKING=1 (like
  // CUDA_LAUNCH_BLOCKING=1) it also waits until the kernel has run and throws
  // its error, if any, so a failure is reported at the launch that caused it
  // and no work is ever left running when a launch returns.
  void launch(const c10::Stream& stream, std::function<void()> kernel);
  bool launch_blocking() const { return launch_blocking_; }

  // -- streams -------------------------------------------------------------------
  c10::StreamId create_stream(int device);
  EmuStream& stream(int device, c10::StreamId id);
  void synchronize_device(int device);

  // -- events --------------------------------------------------------------------
  c10::EventId create_event();
  void destroy_event(c10::EventId event);
  void record_event(c10::EventId event, int device, c10::StreamId stream);
  bool query_event(c10::EventId event);
  void synchronize_event(c10::EventId event);
  void stream_wait_event(int device, c10::StreamId stream, c10::EventId event);
  double elapsed_ms(c10::EventId start, c10::EventId end);

 private:
  struct Allocation {
    std::unique_ptr<char[]> memory;
    size_t size;
  };
  struct Device {
    mutable std::mutex mutex;
    std::map<uint64_t, Allocation> heap;  // by offset in the device's address space
    uint64_t next_offset = 4096;          // addresses are never reused
    size_t used = 0;
    size_t limit = 0;
    std::map<c10::StreamId, std::unique_ptr<EmuStream>> streams;
    c10::StreamId next_stream = 1;
  };
  struct Event {
    std::mutex mutex;
    std::condition_variable completed_cv;
    uint64_t recorded = 0;   // generation of the latest record()
    uint64_t completed = 0;  // generation the stream has reached
    std::chrono::steady_clock::time_point time;
  };

  EmuDriver();
  Device& device(int index) const;
  std::shared_ptr<Event> event(c10::EventId id) const;

  std::vector<std::unique_ptr<Device>> devices_;
  std::string configuration_error_;
  bool launch_blocking_ = false;
  mutable std::mutex events_mutex_;
  std::map<c10::EventId, std::shared_ptr<Event>> events_;
  c10::EventId next_event_ = 1;
};

}  // namespace torch_emu
