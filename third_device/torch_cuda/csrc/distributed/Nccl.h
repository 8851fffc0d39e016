#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "aten/Tensor.h"

namespace torch_cuda::distributed {

// A collective or communicator that failed (NCCL's or CUDA's error inside).
class NcclError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A wait bounded by the group's timeout ran out.
class NcclTimeout : public NcclError {
 public:
  using NcclError::NcclError;
};

// NCCL, loaded at run time from the nvidia-nccl-cu13 wheel
// (torch_cuda.distributed finds it through the installed package and calls
// load_nccl): _CUDAC must import without NCCL, and without a GPU.
void load_nccl(const std::string& library);
bool nccl_loaded();
// Was torch_cuda built with the wheel's nccl.h (the @cuda_wheels repository)?
bool nccl_headers_available();
// ncclGetVersion(): e.g. 22809 for 2.28.9. Needs no GPU.
int nccl_version();
// ncclGetUniqueId(): the 128 bytes rank 0 hands to the others.
std::string nccl_unique_id();

// One collective, queued at launch on the communicator's stream.
//
// launch() (the caller's thread) records an event on the user's current
// stream, makes the communicator's stream wait for it (the inputs are ready
// once the work queued before the call has run), queues the NCCL calls there,
// and makes the user's stream wait for their end: work queued after the call
// on the user's stream is ordered after the collective, and every dependency
// is one CUDA sees (events), never a host-side gate. run() (the group's
// worker thread) waits for completion, bounded by the timeout, polling
// ncclCommGetAsyncError; on timeout or error it aborts the communicator.
// The work holds its tensors until it has run, so their memory is not reused
// while NCCL still reads or writes it.
class NcclCommunicator;
class NcclWork {
 public:
  enum class Kind { AllReduce, Broadcast, AllGather, ReduceScatter };

  // Blocks until the collective completed (results are in the tensors).
  void run(double timeout_s);
  // The group gave up on it after launch (a rank vanished): the queued NCCL
  // calls may never match, so the communicator is aborted.
  void cancel();
  ~NcclWork();

 private:
  friend class NcclCommunicator;
  NcclWork() = default;

  std::shared_ptr<NcclCommunicator> comm_;
  std::vector<at::Tensor> tensors_;
  void* done_ = nullptr;  // cudaEvent_t recorded after the NCCL calls
};

// One NCCL communicator for one device of this rank.
class NcclCommunicator : public std::enable_shared_from_this<NcclCommunicator> {
 public:
  // ncclCommInitRankConfig in non-blocking mode, polled until ready; on
  // timeout the communicator is aborted and NcclTimeout is thrown.
  static std::shared_ptr<NcclCommunicator> create(const std::string& unique_id, int rank, int world_size, int device,
                                                  double timeout_s);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // Queues a collective (see NcclWork). `tensors`:
  //   AllReduce {t}; Broadcast {t}; AllGather {input, out_0..out_{w-1}};
  //   ReduceScatter {output, in_0..in_{w-1}}.
  // `op`: "sum", "avg", "max", "min", "product" (ignored by the others).
  // Callers must have checked that every rank calls the same collective
  // with matching tensors first: NCCL does not check.
  std::shared_ptr<NcclWork> launch(NcclWork::Kind kind, const std::vector<at::Tensor>& tensors,
                                   const std::string& op, int root, double timeout_s);

  // Aborts outstanding work (NCCL ends its kernels); later calls fail.
  void abort(const std::string& why);
  // Finalizes and destroys the communicator (aborts it if it failed).
  void close();

  int device() const { return device_; }

 private:
  friend class NcclWork;
  NcclCommunicator() = default;
  void wait(NcclWork& work, double timeout_s);
  void throw_if_failed();
  // "; ncclCommAbort also failed: ..." when the last abort failed, else empty.
  std::string failure_suffix();

  std::mutex mutex_;
  void* comm_ = nullptr;    // ncclComm_t
  void* stream_ = nullptr;  // cudaStream_t (non-blocking)
  int device_ = 0;
  int rank_ = 0;
  int world_size_ = 0;
  std::string failed_;  // why the communicator is unusable, if it is
  std::string abort_failure_;
};

}  // namespace torch_cuda::distributed
