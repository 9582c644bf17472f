// nccl_communicator.h in builds without NCCL (no CUDA toolkit, or no libnccl): the job asks for
// "nccl" only on CUDA devices, which such a build does not have either.
#include "dist/nccl_communicator.h"

namespace wf::dist {

bool ncclAvailable() { return false; }

Expected<std::shared_ptr<Communicator>> createNcclCommunicator(std::shared_ptr<TcpStore>, int, int, int,
                                                               std::chrono::milliseconds, const std::string&) {
  return unimplemented("nccl: this build of warpforge has no NCCL (it needs the CUDA toolkit and libnccl)");
}

}  // namespace wf::dist
