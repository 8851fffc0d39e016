#include "torch_cuda/csrc/distributed/Nccl.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <thread>
#include <utility>

#include "c10/core/Stream.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/framework/DeviceScope.h"
#include "torch_cuda/csrc/framework/DynamicLibrary.h"

#if defined(CUDA_WHEELS_HAVE_NCCL)
#include <nccl.h>
#endif

namespace torch_cuda::distributed {

#if defined(CUDA_WHEELS_HAVE_NCCL)
namespace {

using Clock = std::chrono::steady_clock;

// The entry points, typed by the wheel's own header.
struct NcclApi {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) get_async_error = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommFinalize) finalize = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclReduce) reduce = nullptr;
};

std::mutex g_mutex;
NcclApi g_api;
bool g_loaded = false;

const NcclApi& api() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_loaded) {
    throw NcclError("NCCL is not loaded: torch_cuda.distributed loads it from the nvidia-nccl-cu13 wheel");
  }
  return g_api;
}

std::string describe(const NcclApi& a, ncclResult_t result, ncclComm_t comm) {
  std::string text = std::string(a.error_string(result)) + " (" + std::to_string(static_cast<int>(result)) + ")";
  const char* last = comm != nullptr ? a.last_error(comm) : nullptr;
  if (last != nullptr && last[0] != '\0') {
    text += ": " + std::string(last);
  }
  return text;
}

ncclDataType_t nccl_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool:
      return ncclUint8;
    case c10::ScalarType::Int64:
      return ncclInt64;
    case c10::ScalarType::Float32:
      return ncclFloat32;
    case c10::ScalarType::Float64:
      return ncclFloat64;
  }
  throw NcclError("nccl: unsupported dtype");
}

ncclRedOp_t nccl_op(const std::string& op, c10::ScalarType t) {
  // Bool tensors reduce as NumPy does on bools: sum is "or", product "and".
  const bool boolean = t == c10::ScalarType::Bool;
  if (op == "sum") return boolean ? ncclMax : ncclSum;
  if (op == "product") return boolean ? ncclMin : ncclProd;
  if (op == "max") return ncclMax;
  if (op == "min") return ncclMin;
  if (op == "avg") return ncclAvg;
  throw std::invalid_argument("nccl: unknown reduce op '" + op + "'");
}

// Polls a non-blocking communicator until its last call finished.
void wait_ready(const NcclApi& a, ncclComm_t comm, Clock::time_point deadline, const std::string& what) {
  while (true) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = a.get_async_error(comm, &state);
    if (r != ncclSuccess) {
      throw NcclError("nccl: " + what + ": ncclCommGetAsyncError failed: " + describe(a, r, comm));
    }
    if (state == ncclSuccess) {
      return;
    }
    if (state != ncclInProgress) {
      throw NcclError("nccl: " + what + " failed: " + describe(a, state, comm));
    }
    if (Clock::now() > deadline) {
      throw NcclTimeout("nccl: " + what + " did not complete");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void check_call(const NcclApi& a, ncclResult_t r, ncclComm_t comm, const char* call) {
  // A non-blocking communicator answers ncclInProgress while work is queued.
  if (r != ncclSuccess && r != ncclInProgress) {
    throw NcclError(std::string("nccl: ") + call + " failed: " + describe(a, r, comm));
  }
}

// Keeps an NCCL group balanced on every path. An exception between
// ncclGroupStart and ncclGroupEnd would leave the calling thread's group
// open, and NCCL would then defer every later call on this thread to a group
// end that never comes.
class GroupGuard {
 public:
  GroupGuard(const NcclApi& a, ncclComm_t comm) : a_(a), comm_(comm) {
    check_call(a_, a_.group_start(), comm_, "ncclGroupStart");
  }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
  // Ends the group and reports its error.
  void end() {
    open_ = false;
    check_call(a_, a_.group_end(), comm_, "ncclGroupEnd");
  }
  // Unwinding: close the group; the error being thrown already says what failed.
  ~GroupGuard() {
    if (open_) {
      a_.group_end();
    }
  }

 private:
  const NcclApi& a_;
  ncclComm_t comm_;
  bool open_ = true;
};

// ncclCommAbort's own failure, appended to the reason the communicator died
// (the communicator is gone either way; its resources may have leaked).
std::string abort_comm(const NcclApi& a, ncclComm_t comm) {
  const ncclResult_t r = a.abort(comm);
  if (r == ncclSuccess) {
    return "";
  }
  return "; ncclCommAbort also failed: " + describe(a, r, nullptr);
}

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

void load_nccl(const std::string& library) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_loaded) {
    return;
  }
  const DynamicLibrary lib("NCCL", library);
  NcclApi a;
  lib.bind(a.get_version, "ncclGetVersion");
  lib.bind(a.get_unique_id, "ncclGetUniqueId");
  lib.bind(a.init_rank_config, "ncclCommInitRankConfig");
  lib.bind(a.get_async_error, "ncclCommGetAsyncError");
  lib.bind(a.abort, "ncclCommAbort");
  lib.bind(a.finalize, "ncclCommFinalize");
  lib.bind(a.destroy, "ncclCommDestroy");
  lib.bind(a.error_string, "ncclGetErrorString");
  lib.bind(a.last_error, "ncclGetLastError");
  lib.bind(a.group_start, "ncclGroupStart");
  lib.bind(a.group_end, "ncclGroupEnd");
  lib.bind(a.all_reduce, "ncclAllReduce");
  lib.bind(a.broadcast, "ncclBroadcast");
  lib.bind(a.reduce, "ncclReduce");
  g_api = a;
  g_loaded = true;  // never unloaded
}

bool nccl_loaded() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_loaded;
}

bool nccl_headers_available() { return true; }

int nccl_version() {
  const NcclApi& a = api();
  int version = 0;
  const ncclResult_t r = a.get_version(&version);
  if (r != ncclSuccess) {
    throw NcclError("ncclGetVersion failed: " + describe(a, r, nullptr));
  }
  return version;
}

std::string nccl_unique_id() {
  const NcclApi& a = api();
  ncclUniqueId id;
  const ncclResult_t r = a.get_unique_id(&id);
  if (r != ncclSuccess) {
    throw NcclError("ncclGetUniqueId failed: " + describe(a, r, nullptr));
  }
  return std::string(id.internal, sizeof(id.internal));
}

std::shared_ptr<NcclCommunicator> NcclCommunicator::create(const std::string& unique_id, int rank, int world_size,
                                                           int device, double timeout_s) {
  const NcclApi& a = api();
  if (unique_id.size() != NCCL_UNIQUE_ID_BYTES) {
    throw std::invalid_argument("nccl: a unique id has " + std::to_string(NCCL_UNIQUE_ID_BYTES) + " bytes, got " +
                                std::to_string(unique_id.size()));
  }
  if (!cuda_hooks().is_available()) {
    throw NcclError("nccl: CUDA is not available: " + cuda_hooks().unavailable_reason());
  }
  DeviceScope scope(device);
  std::shared_ptr<NcclCommunicator> c(new NcclCommunicator());
  c->device_ = device;
  c->rank_ = rank;
  c->world_size_ = world_size;
  cudaStream_t stream = nullptr;
  TORCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  c->stream_ = stream;

  ncclUniqueId id;
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // return at once; we poll, bounded by the timeout
  ncclComm_t comm = nullptr;
  const ncclResult_t r = a.init_rank_config(&comm, world_size, id, rank, &config);
  c->comm_ = comm;
  if (r != ncclSuccess && r != ncclInProgress) {
    // Describe first: ncclGetLastError needs the communicator abort() destroys.
    const std::string message = "nccl: ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " +
                                std::to_string(world_size) + ", cuda:" + std::to_string(device) +
                                ") failed: " + describe(a, r, comm);
    c->abort(message);
    throw NcclError(message + c->failure_suffix());
  }
  try {
    wait_ready(a, comm, deadline_after(timeout_s),
               "ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " + std::to_string(world_size) + ")");
  } catch (const NcclTimeout&) {
    c->abort("initialisation timed out");
    throw NcclTimeout("nccl: ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " +
                      std::to_string(world_size) + ") did not complete within " + std::to_string(timeout_s) +
                      " s; communicator aborted (a rank is missing or cannot reach the others)");
  } catch (const NcclError& error) {
    c->abort(error.what());
    throw;
  }
  return c;
}

std::shared_ptr<NcclWork> NcclCommunicator::launch(NcclWork::Kind kind, const std::vector<at::Tensor>& tensors,
                                                   const std::string& op, int root, double timeout_s) {
  if (tensors.empty()) {
    throw std::invalid_argument("nccl: a collective needs a tensor");
  }
  const size_t expected = kind == NcclWork::Kind::AllGather || kind == NcclWork::Kind::ReduceScatter
                              ? static_cast<size_t>(world_size_) + 1
                              : 1;
  if (tensors.size() != expected) {
    throw std::invalid_argument("nccl: expected " + std::to_string(expected) + " tensors, got " +
                                std::to_string(tensors.size()));
  }
  for (const at::Tensor& t : tensors) {
    if (t.device().index() != device_ || t.numel() != tensors[0].numel() || t.dtype() != tensors[0].dtype()) {
      throw std::invalid_argument("nccl: tensors must share the communicator's device (cuda:" +
                                  std::to_string(device_) + "), the element count and the dtype");
    }
  }
  const NcclApi& a = api();
  const ncclDataType_t dtype = nccl_dtype(tensors[0].dtype());
  const ncclRedOp_t red = nccl_op(op.empty() ? "sum" : op, tensors[0].dtype());
  const size_t count = static_cast<size_t>(tensors[0].numel());
  const std::vector<at::Tensor>& t = tensors;

  std::unique_lock<std::mutex> lock(mutex_);
  throw_if_failed();
  DeviceScope scope(device_);
  auto comm = static_cast<ncclComm_t>(comm_);
  auto stream = static_cast<cudaStream_t>(stream_);
  // The user's current stream: the collective's place in its order.
  const cudaStream_t user = cuda_hooks().native_stream(c10::current_stream(tensors[0].device()));
  cudaEvent_t ready = nullptr;
  TORCH_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  TORCH_CUDA_CHECK(cudaEventRecord(ready, user));
  const cudaError_t waited = cudaStreamWaitEvent(stream, ready, 0);
  ignore_error(cudaEventDestroy(ready));  // released once the wait is queued
  check(waited, "cudaStreamWaitEvent");
  try {
    switch (kind) {
      case NcclWork::Kind::AllReduce:
        check_call(a, a.all_reduce(t[0].data_ptr(), t[0].data_ptr(), count, dtype, red, comm, stream), comm,
                   "ncclAllReduce");
        break;
      case NcclWork::Kind::Broadcast:
        check_call(a, a.broadcast(t[0].data_ptr(), t[0].data_ptr(), count, dtype, root, comm, stream), comm,
                   "ncclBroadcast");
        break;
      case NcclWork::Kind::AllGather:
        // Separate output tensors: one broadcast per rank, fused in a group
        // (NCCL's all_gather wants one contiguous receive buffer).
        {
          GroupGuard group(a, comm);
          for (int r = 0; r < world_size_; ++r) {
            const void* send = r == rank_ ? t[0].data_ptr() : nullptr;
            check_call(a, a.broadcast(send, t[1 + r].data_ptr(), count, dtype, r, comm, stream), comm,
                       "ncclBroadcast");
          }
          group.end();
        }
        break;
      case NcclWork::Kind::ReduceScatter:
        // Separate input tensors: rank r's output is a reduce rooted at r.
        {
          GroupGuard group(a, comm);
          for (int r = 0; r < world_size_; ++r) {
            check_call(a, a.reduce(t[1 + r].data_ptr(), t[0].data_ptr(), count, dtype, red, r, comm, stream), comm,
                       "ncclReduce");
          }
          group.end();
        }
        break;
    }
    // Non-blocking communicators may still be queueing the calls.
    wait_ready(a, comm, deadline_after(timeout_s), "queueing the collective");
  } catch (const NcclError& error) {
    lock.unlock();
    abort(error.what());
    throw;
  }
  auto work = std::shared_ptr<NcclWork>(new NcclWork());
  work->comm_ = shared_from_this();
  work->tensors_ = tensors;
  cudaEvent_t done = nullptr;
  TORCH_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  work->done_ = done;
  TORCH_CUDA_CHECK(cudaEventRecord(done, stream));
  TORCH_CUDA_CHECK(cudaStreamWaitEvent(user, done, 0));
  return work;
}

void NcclCommunicator::throw_if_failed() {
  if (!failed_.empty()) {
    throw NcclError("nccl: the communicator on cuda:" + std::to_string(device_) + " is unusable: " + failed_);
  }
}

void NcclCommunicator::wait(NcclWork& work, double timeout_s) {
  const NcclApi& a = api();
  const Clock::time_point deadline = deadline_after(timeout_s);
  auto done = static_cast<cudaEvent_t>(work.done_);
  std::string failure;
  bool timed_out = false;
  while (true) {
    const cudaError_t status = cudaEventQuery(done);
    if (status == cudaSuccess) {
      break;
    }
    ignore_error(status);  // not-ready included: leave no last error behind
    if (status != cudaErrorNotReady) {
      (void)cudaGetLastError();  // clears the sticky error; its value is the one in hand
      failure = "the collective's stream failed: " + torch_cuda::describe(status);
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.empty()) {
        failure = failed_;
        break;
      }
      ncclResult_t state = ncclSuccess;
      auto comm = static_cast<ncclComm_t>(comm_);
      if (a.get_async_error(comm, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress) {
        failure = describe(a, state, comm);
        break;
      }
    }
    if (Clock::now() > deadline) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (timed_out) {
    abort("a collective timed out");
    throw NcclTimeout("nccl: the collective did not complete within " + std::to_string(timeout_s) +
                      " s; communicator aborted (a peer is dead, hung or behind)");
  }
  if (!failure.empty()) {
    abort(failure);
    throw NcclError("nccl: the collective failed: " + failure);
  }
  work.tensors_.clear();
}

void NcclCommunicator::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_.empty()) {
    failed_ = why;
  }
  if (comm_ != nullptr) {
    const std::string failed = abort_comm(api(), static_cast<ncclComm_t>(comm_));  // also ends its kernels
    comm_ = nullptr;
    if (!failed.empty()) {
      abort_failure_ = failed;
      std::fprintf(stderr, "torch_cuda: nccl: %s%s\n", why.c_str(), failed.c_str());
    }
  }
}

std::string NcclCommunicator::failure_suffix() {
  std::lock_guard<std::mutex> lock(mutex_);
  return abort_failure_;
}

void NcclCommunicator::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (comm_ == nullptr) {
    return;
  }
  const NcclApi& a = api();
  auto comm = static_cast<ncclComm_t>(comm_);
  comm_ = nullptr;
  if (failed_.empty()) {
    try {
      DeviceScope scope(device_);
      check_call(a, a.finalize(comm), comm, "ncclCommFinalize");
      wait_ready(a, comm, deadline_after(30.0), "ncclCommFinalize");
      a.destroy(comm);
      failed_ = "closed";
      return;
    } catch (const std::exception& error) {
      failed_ = error.what();
    }
  }
  abort_failure_ = abort_comm(a, comm);
  failed_ += abort_failure_;
}

NcclCommunicator::~NcclCommunicator() {
  try {
    close();
  } catch (...) {
  }
  if (stream_ != nullptr) {
    ignore_error(cudaStreamDestroy(static_cast<cudaStream_t>(stream_)));
  }
}

void NcclWork::run(double timeout_s) { comm_->wait(*this, timeout_s); }

void NcclWork::cancel() {
  comm_->abort("the process group gave up on a collective already queued on the GPU");
  tensors_.clear();
}

NcclWork::~NcclWork() {
  if (done_ != nullptr) {
    ignore_error(cudaEventDestroy(static_cast<cudaEvent_t>(done_)));
  }
}

#else  // built without the nvidia-nccl-cu13 wheel's header

namespace {
[[noreturn]] void unavailable() {
  throw NcclError(
      "torch_cuda was built without NCCL's header: the nvidia-nccl-cu13 wheel was not installed for the "
      "build's Python (run tools/dev bootstrap, then rebuild)");
}
}  // namespace

void load_nccl(const std::string&) { unavailable(); }
bool nccl_loaded() { return false; }
bool nccl_headers_available() { return false; }
int nccl_version() { unavailable(); }
std::string nccl_unique_id() { unavailable(); }
std::shared_ptr<NcclCommunicator> NcclCommunicator::create(const std::string&, int, int, int, double) {
  unavailable();
}
std::shared_ptr<NcclWork> NcclCommunicator::launch(NcclWork::Kind, const std::vector<at::Tensor>&, const std::string&,
                                                   int, double) {
  unavailable();
}
void NcclCommunicator::abort(const std::string&) {}
std::string NcclCommunicator::failure_suffix() { return ""; }
void NcclCommunicator::close() {}
NcclCommunicator::~NcclCommunicator() = default;
void NcclCommunicator::wait(NcclWork&, double) { unavailable(); }
void NcclCommunicator::throw_if_failed() {}
void NcclWork::run(double) { unavailable(); }
void NcclWork::cancel() {}
NcclWork::~NcclWork() = default;

#endif

}  // namespace torch_cuda::distributed
