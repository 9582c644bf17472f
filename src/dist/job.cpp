// The job's environment and the Job (job.h).
#include "dist/job.h"

#include <cerrno>
#include <cstdlib>

#include "dist/gloo_communicator.h"
#include "dist/nccl_communicator.h"

namespace wf::dist {

namespace {

// An integer variable; nullopt when unset.
Expected<std::optional<long>> intVariable(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::optional<long>();
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0')
    return invalidArgument(std::string("the environment variable ") + name + "='" + text + "' is not an integer");
  return std::optional<long>(v);
}

}  // namespace

Expected<std::optional<JobEnv>> jobFromEnvironment() {
  WF_ASSIGN_OR_RETURN(std::optional<long> world, intVariable("WORLD_SIZE"));
  if (!world || *world == 1) return std::optional<JobEnv>();
  if (*world < 1) return invalidArgument("WORLD_SIZE=" + std::to_string(*world) + " must be at least 1");
  JobEnv env;
  env.worldSize = static_cast<int>(*world);
  WF_ASSIGN_OR_RETURN(std::optional<long> rank, intVariable("RANK"));
  if (!rank) return invalidArgument("WORLD_SIZE=" + std::to_string(*world) + " is set but RANK is not");
  if (*rank < 0 || *rank >= *world)
    return invalidArgument("RANK=" + std::to_string(*rank) + " is outside [0, WORLD_SIZE=" + std::to_string(*world) + ")");
  env.rank = static_cast<int>(*rank);
  WF_ASSIGN_OR_RETURN(std::optional<long> localRank, intVariable("LOCAL_RANK"));
  env.localRank = localRank ? static_cast<int>(*localRank) : 0;
  if (env.localRank < 0) return invalidArgument("LOCAL_RANK=" + std::to_string(env.localRank) + " is negative");
  const char* addr = std::getenv("MASTER_ADDR");
  if (!addr || !*addr) return invalidArgument("WORLD_SIZE is set but MASTER_ADDR is not");
  env.masterAddr = addr;
  WF_ASSIGN_OR_RETURN(std::optional<long> port, intVariable("MASTER_PORT"));
  if (!port) return invalidArgument("WORLD_SIZE is set but MASTER_PORT is not");
  if (*port <= 0 || *port > 65535) return invalidArgument("MASTER_PORT=" + std::to_string(*port) + " is not a port");
  env.masterPort = static_cast<int>(*port);
  const char* agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  env.storePort = agentStore && std::string(agentStore) == "True" ? env.masterPort + 1 : env.masterPort;
  WF_ASSIGN_OR_RETURN(std::optional<long> storePort, intVariable("WARPFORGE_STORE_PORT"));
  if (storePort) env.storePort = static_cast<int>(*storePort);
  if (env.storePort <= 0 || env.storePort > 65535)
    return invalidArgument("the job's store port " + std::to_string(env.storePort) + " is not a port");
  return std::optional<JobEnv>(env);
}

Expected<std::chrono::milliseconds> timeoutFromEnvironment() {
  const char* text = std::getenv("WARPFORGE_DIST_TIMEOUT");
  if (!text || !*text) return std::chrono::milliseconds(std::chrono::seconds(300));
  char* end = nullptr;
  errno = 0;
  double seconds = std::strtod(text, &end);
  if (errno != 0 || *end != '\0' || !(seconds > 0))
    return invalidArgument(std::string("WARPFORGE_DIST_TIMEOUT='") + text + "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

Expected<std::unique_ptr<Job>> Job::join(const JobEnv& env, const std::string& backend, int deviceOrdinal,
                                         std::chrono::milliseconds timeout) {
  std::unique_ptr<Job> job(new Job());
  job->env_ = env;
  TcpStore::Options options;
  options.host = env.masterAddr;
  options.port = env.storePort;
  options.isServer = env.rank == 0;
  options.rank = env.rank;
  options.timeout = timeout;
  Expected<std::unique_ptr<TcpStore>> store = TcpStore::create(options);
  if (!store) return store.status().withContext("rank " + std::to_string(env.rank) + " joining the job");
  job->store_ = std::move(*store);
  if (backend == "gloo") {
    WF_ASSIGN_OR_RETURN(job->world_,
                        createGlooCommunicator(job->store_, env.rank, env.worldSize, timeout, env.masterAddr));
  } else if (backend == "nccl") {
    if (!ncclAvailable()) return unimplemented("nccl: this build of warpforge has no NCCL (it needs a CUDA build)");
    WF_ASSIGN_OR_RETURN(job->world_, createNcclCommunicator(job->store_, env.rank, env.worldSize, deviceOrdinal,
                                                            timeout));
  } else {
    return invalidArgument("unknown communicator backend '" + backend + "' (gloo, nccl)");
  }
  return job;
}

Status Job::finish() { return world_->barrierSync(); }

void Job::abandon() { store_->abandon(); }

Job::~Job() {
  world_.reset();  // before the store its rendezvous used
  store_.reset();
}

}  // namespace wf::dist
