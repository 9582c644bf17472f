// The Communicator over NCCL, for CUDA device memory (built when the CUDA toolkit and NCCL are
// found: WF_HAVE_NCCL). Operations are enqueued on a CUDA stream (the caller's, or the
// communicator's own); a Work completes when a CUDA event recorded after the operation does.
// NCCL runs non-blocking (ncclConfig_t::blocking = 0): every wait polls the event and
// ncclCommGetAsyncError up to the timeout and aborts the communicator (ncclCommAbort) when a
// peer failed or the timeout passed, so a dead rank never hangs the others.
#pragma once

#include <chrono>
#include <memory>

#include "dist/communicator.h"
#include "dist/store.h"

namespace wf::dist {

// True in builds with NCCL.
bool ncclAvailable();

// The communicator of ranks 0..size-1 that meet in `store`, on CUDA device `deviceOrdinal`: rank 0
// creates the NCCL unique id and publishes it in the store under `key`.
Expected<std::shared_ptr<Communicator>> createNcclCommunicator(std::shared_ptr<TcpStore> store, int rank, int size,
                                                               int deviceOrdinal, std::chrono::milliseconds timeout,
                                                               const std::string& key = "nccl/world");

}  // namespace wf::dist
