// Joining and leaving a distributed job (cli.h: joinJob, leaveJob; docs/distributed.md).
#include <iostream>

#include "cli/cli.h"
#include "dist/job.h"

namespace wf::cli {

Expected<std::shared_ptr<dist::Job>> joinJob(const std::string& deviceFlag) {
  WF_ASSIGN_OR_RETURN(std::optional<dist::JobEnv> env, dist::jobFromEnvironment());
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
