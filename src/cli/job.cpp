// Joining and leaving a distributed job (cli.h: joinJob, leaveJob; docs/distributed.md).
#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "dist/job.h"

namespace wf::cli {

namespace {

// WORLD_SIZE=1 set explicitly: a job of one rank, whose store (on any free port: nobody else
// needs to find it) and communicator are this process's own.
Expected<std::optional<dist::JobEnv>> worldOfOne() {
  const char* world = std::getenv("WORLD_SIZE");
  if (!world || std::string(world) != "1") return std::optional<dist::JobEnv>();
  const char* rank = std::getenv("RANK");
  if (rank && *rank && std::string(rank) != "0")
    return invalidArgument(std::string("RANK=") + rank + " is outside [0, WORLD_SIZE=1)");
  dist::JobEnv env;
  const char* localRank = std::getenv("LOCAL_RANK");
  if (localRank && *localRank) {
    char* end = nullptr;
    long v = std::strtol(localRank, &end, 10);
    if (*end != '\0' || v < 0) return invalidArgument(std::string("LOCAL_RANK='") + localRank + "' is not a rank");
    env.localRank = static_cast<int>(v);
  }
  const char* addr = std::getenv("MASTER_ADDR");
  if (addr && *addr) env.masterAddr = addr;
  env.masterPort = 0;
  env.storePort = 0;
  return std::optional<dist::JobEnv>(env);
}

}  // namespace

Expected<std::shared_ptr<dist::Job>> joinJob(const std::string& deviceFlag, bool evenAlone) {
  WF_ASSIGN_OR_RETURN(std::optional<dist::JobEnv> env, dist::jobFromEnvironment());
  if (!env && evenAlone) {
    WF_ASSIGN_OR_RETURN(env, worldOfOne());
  }
  if (!env) return std::shared_ptr<dist::Job>();
  WF_ASSIGN_OR_RETURN(DeviceSpec device, DeviceSpec::parse(deviceFlag));
  WF_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, dist::timeoutFromEnvironment());
  const bool cuda = device.kind == "cuda";
  // One GPU per rank: a bare "cuda" is the rank's local GPU, as torchrun's LOCAL_RANK means it.
  const bool ordinalGiven = deviceFlag.find(':') != std::string::npos;
  const int ordinal = cuda && !ordinalGiven ? env->localRank : device.ordinal;
  WF_ASSIGN_OR_RETURN(std::unique_ptr<dist::Job> job, dist::Job::join(*env, cuda ? "nccl" : "gloo", ordinal, timeout));
  return std::shared_ptr<dist::Job>(std::move(job));
}

int leaveJob(const std::shared_ptr<dist::Job>& job, int exitCode) {
  if (!job) return exitCode;
  if (exitCode != kExitOk) {
    job->abandon();
    return exitCode;
  }
  Status finished = job->finish();
  if (!finished.isOk()) {
    printError("rank " + std::to_string(job->env().rank) + " leaving the job: " + finished.message());
    job->abandon();
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace wf::cli
