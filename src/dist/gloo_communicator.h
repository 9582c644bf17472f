// The Communicator over Gloo (Debian libgloo-dev) and its TCP transport, for host memory: the
// engine torch.distributed's "gloo" backend runs on.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "dist/communicator.h"
#include "dist/store.h"

namespace wf::dist {

// The communicator of ranks 0..size-1 that meet in `store`: each calls this with its own rank.
// Ranks connect to each other directly (a full mesh of TCP connections) over the interface that
// GLOO_SOCKET_IFNAME names, or the loopback when `masterAddr` is a loopback address, or this
// host's name.
Expected<std::shared_ptr<Communicator>> createGlooCommunicator(std::shared_ptr<TcpStore> store, int rank, int size,
                                                               std::chrono::milliseconds timeout,
                                                               const std::string& masterAddr);

}  // namespace wf::dist
