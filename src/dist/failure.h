// How a communicator reports a failed operation: it asks the job's store which ranks left the job
// (their connection to the store closed without a goodbye) and names them, so that the error a
// surviving rank prints says which rank died, not only which socket broke.
#pragma once

#include <chrono>
#include <string>

#include "dist/store.h"
#include "support/status.h"

namespace wf::dist {

// "<operation> failed: rank 2 left the job (...): <cause>", or, when no rank left within a short
// grace (the store notices a death a moment after the peers do), a message saying that no rank
// left and that one may be stuck or slower than `timeout`.
Status peerFailure(TcpStore& store, const std::string& operation, const std::string& cause,
                   std::chrono::milliseconds timeout);

}  // namespace wf::dist
