// One process's place in a distributed job, from the variables torchrun, `warpforge launch`,
// Slurm wrappers and Kubernetes training operators set: RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT. A Job joins the job's store (rank 0 serves it) and builds the world
// communicator on the engine the device asks for (gloo on the host, nccl on CUDA devices).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "dist/communicator.h"
#include "dist/store.h"

namespace wf::dist {

struct JobEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  // Where rank 0 serves the job's store: MASTER_PORT, except under torchrun, whose agent already
  // serves its own store (torch's protocol) there (TORCHELASTIC_USE_AGENT_STORE=True): then
  // MASTER_PORT + 1. WARPFORGE_STORE_PORT overrides both.
  int storePort = 29500;
};

// The job this process belongs to: nullopt when WORLD_SIZE is unset or 1 (a single process). A
// malformed or missing variable is an error naming it.
Expected<std::optional<JobEnv>> jobFromEnvironment();

// WARPFORGE_DIST_TIMEOUT (seconds, default 300): the bound on every wait of the store and of
// every collective.
Expected<std::chrono::milliseconds> timeoutFromEnvironment();

class Job {
 public:
  // Joins the job: rank 0 starts the store, every rank connects and builds the world
  // communicator of `backend` ("gloo"; "nccl" on CUDA device `deviceOrdinal`, in builds with NCCL).
  static Expected<std::unique_ptr<Job>> join(const JobEnv& env, const std::string& backend, int deviceOrdinal,
                                             std::chrono::milliseconds timeout);
  // The end of a job that succeeded: a barrier, so that no rank tears down its connections (and
  // rank 0 its store) while a peer still reads from them. A rank that failed skips it and exits:
  // its peers then fail at once, naming it, instead of waiting for the timeout.
  Status finish();
  // The end of a job that failed on this rank: leaves at once, without a goodbye.
  void abandon();
  ~Job();

  const JobEnv& env() const { return env_; }
  Communicator& world() { return *world_; }
  std::shared_ptr<Communicator> worldPtr() const { return world_; }
  TcpStore& store() { return *store_; }
  std::shared_ptr<TcpStore> storePtr() const { return store_; }

 private:
  Job() = default;
  JobEnv env_;
  std::shared_ptr<TcpStore> store_;
  std::shared_ptr<Communicator> world_;
};

}  // namespace wf::dist
