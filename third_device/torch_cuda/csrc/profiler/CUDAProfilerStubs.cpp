#include "torch_cuda/csrc/profiler/CUDAProfilerStubs.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "csrc/profiler/Profiler.h"
#include "csrc/profiler/ProfilerStubs.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/framework/DeviceScope.h"
#include "torch_cuda/csrc/profiler/NvtxRange.h"

namespace torch_cuda {
namespace {

using torch_core::profiler::host_now_ns;

// An event of one device whose host steady-clock time is known: recorded on
// an idle stream of its own between two host clock reads, and synchronised.
// The device reached it between those reads; the midpoint is taken, so the
// error is at most half the window (a few microseconds), and the narrowest of
// three attempts is kept.
class Anchor {
 public:
  explicit Anchor(c10::DeviceIndex device) {
    const DeviceScope scope(device);
    cudaStream_t stream = nullptr;
    TORCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    TORCH_CUDA_CHECK(cudaEventCreate(&event_));
    int64_t best_window = -1;
    cudaEvent_t attempt = nullptr;
    TORCH_CUDA_CHECK(cudaEventCreate(&attempt));
    for (int i = 0; i < 3; ++i) {
      const int64_t before = host_now_ns();
      TORCH_CUDA_CHECK(cudaEventRecord(attempt, stream));
      TORCH_CUDA_CHECK(cudaEventSynchronize(attempt));
      const int64_t after = host_now_ns();
      if (best_window < 0 || after - before < best_window) {
        best_window = after - before;
        host_ns_ = before + (after - before) / 2;
        std::swap(event_, attempt);
      }
    }
    ignore_error(cudaEventDestroy(attempt));
    ignore_error(cudaStreamDestroy(stream));
    created_ns_ = host_now_ns();
  }
  ~Anchor() { ignore_error(cudaEventDestroy(event_)); }
  Anchor(const Anchor&) = delete;
  Anchor& operator=(const Anchor&) = delete;

  // Host time of a completed event of the same device.
  int64_t host_time_of(cudaEvent_t event) const {
    float ms = 0;
    TORCH_CUDA_CHECK(cudaEventElapsedTime(&ms, event_, event));
    return host_ns_ + static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }
  int64_t age_ns() const { return host_now_ns() - created_ns_; }

 private:
  cudaEvent_t event_ = nullptr;
  int64_t host_ns_ = 0;
  int64_t created_ns_ = 0;
};

class CudaMark final : public torch_core::profiler::DeviceMark {
 public:
  CudaMark(std::shared_ptr<const Anchor> anchor, cudaEvent_t event) : anchor_(std::move(anchor)), event_(event) {}
  ~CudaMark() override { ignore_error(cudaEventDestroy(event_)); }
  CudaMark(const CudaMark&) = delete;
  CudaMark& operator=(const CudaMark&) = delete;

  int64_t time_ns() override {
    TORCH_CUDA_CHECK(cudaEventSynchronize(event_));
    return anchor_->host_time_of(event_);
  }
  const std::shared_ptr<const Anchor>& anchor() const { return anchor_; }

 private:
  std::shared_ptr<const Anchor> anchor_;  // alive as long as a mark refers to it
  cudaEvent_t event_;
};

class CudaProfilerStubs final : public torch_core::profiler::ProfilerStubs {
 public:
  // A start mark may renew the device's anchor; its end mark reuses the
  // start's anchor, so both ends of an interval share one clock conversion.
  std::shared_ptr<torch_core::profiler::DeviceMark> mark(const c10::Stream& stream) override {
    return record(stream, anchor_for(stream.device.index()));
  }
  std::shared_ptr<torch_core::profiler::DeviceMark> end_mark(const c10::Stream& stream,
                                                             const torch_core::profiler::DeviceMark& start) override {
    const auto* cuda_start = dynamic_cast<const CudaMark*>(&start);
    if (cuda_start == nullptr) {
      return mark(stream);
    }
    return record(stream, cuda_start->anchor());
  }

  std::shared_ptr<torch_core::profiler::DeviceMark> record(const c10::Stream& stream,
                                                           std::shared_ptr<const Anchor> anchor) {
    const c10::DeviceIndex device = stream.device.index();
    const DeviceScope scope(device);
    cudaEvent_t event = nullptr;
    TORCH_CUDA_CHECK(cudaEventCreate(&event));
    auto mark = std::make_shared<CudaMark>(std::move(anchor), event);
    TORCH_CUDA_CHECK(cudaEventRecord(event, cuda_hooks().native_stream(stream)));
    return mark;
  }

  void range_push(const std::string& name) override { profiler::push_range(name); }
  // Core pops every stub's range when a record_function scope ends; a range
  // opened before this backend was imported has no NVTX push to match.
  void range_pop() override {
    if (profiler::range_depth() > 0) {
      profiler::pop_range();
    }
  }

 private:
  // cudaEventElapsedTime returns a float of milliseconds: its resolution
  // decays with distance from the anchor (0.06 us at 1 s, 60 us at 1000 s), so
  // anchors are renewed every second; GPU and host clocks do not drift
  // measurably over that span.
  static constexpr int64_t kAnchorLifetimeNs = 1'000'000'000;

  std::shared_ptr<const Anchor> anchor_for(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<const Anchor>& anchor = anchors_[device];
    if (!anchor || anchor->age_ns() > kAnchorLifetimeNs) {
      anchor = std::make_shared<const Anchor>(device);
    }
    return anchor;
  }

  std::mutex mutex_;
  std::unordered_map<c10::DeviceIndex, std::shared_ptr<const Anchor>> anchors_;
};

}  // namespace

void register_cuda_profiler(c10::DeviceTypeId cuda) {
  torch_core::profiler::register_profiler_stubs(cuda, std::make_unique<CudaProfilerStubs>());
}

}  // namespace torch_cuda
