// torch_hip's collectives: RCCL in place of torch_cuda's NCCL (Nccl.cpp, not
// translated). RCCL keeps NCCL's API, so the translated Nccl.h is this file's
// interface, but Debian 12 packages no RCCL (no librccl, no rccl/rccl.h): every
// entry point says so, and torch_hip registers no process-group backend.
#include <stdexcept>

#include "torch_hip/csrc/distributed/Nccl.h"

namespace torch_hip::distributed {
namespace {

[[noreturn]] void unavailable() {
  throw NcclError(
      "rccl: torch_hip has no collectives: RCCL (NCCL's HIP port) is not packaged in Debian 12, "
      "so torch_hip is built without it");
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
std::shared_ptr<NcclWork> NcclCommunicator::launch(NcclWork::Kind, const std::vector<at::Tensor>&,
                                                   const std::string&, int, double) {
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

}  // namespace torch_hip::distributed
