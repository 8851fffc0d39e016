#include "torch_emu/csrc/profiler/EmuProfilerStubs.h"

#include <future>
#include <memory>

#include "csrc/profiler/Profiler.h"
#include "csrc/profiler/ProfilerStubs.h"
#include "torch_emu/csrc/framework/EmuDriver.h"

namespace torch_emu {
namespace {

// The worker and the host share the steady clock, so no conversion is needed.
class EmuMark final : public torch_core::profiler::DeviceMark {
 public:
  explicit EmuMark(std::shared_future<int64_t> time) : time_(std::move(time)) {}
  int64_t time_ns() override { return time_.get(); }

 private:
  std::shared_future<int64_t> time_;
};

class EmuProfilerStubs final : public torch_core::profiler::ProfilerStubs {
 public:
  std::shared_ptr<torch_core::profiler::DeviceMark> mark(const c10::Stream& stream) override {
    auto reached = std::make_shared<std::promise<int64_t>>();
    auto mark = std::make_shared<EmuMark>(reached->get_future().share());
    EmuDriver::instance().stream(stream.device.index(), stream.id).enqueue([reached] {
      reached->set_value(torch_core::profiler::host_now_ns());
    });
    return mark;
  }
};

}  // namespace

void register_emu_profiler(c10::DeviceTypeId emu) {
  torch_core::profiler::register_profiler_stubs(emu, std::make_unique<EmuProfilerStubs>());
}

}  // namespace torch_emu
