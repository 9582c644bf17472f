// `warpforge launch -n N -- CMD...`: N processes of a distributed job on this machine, with the
// variables torchrun sets (docs/distributed.md). Each rank runs in a process group of its own, so
// tearing the job down also stops whatever the rank started; its stdout and stderr come back line
// by line with a `[rank k] ` prefix. The first rank to fail (a non-zero exit or a signal) stops the
// job: the others get SIGTERM, then SIGKILL after the grace period, and launch exits with the
// failed rank's code, naming it.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace wf::cli {

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t gInterrupted = 0;
void onSignal(int signal) { gInterrupted = signal; }

// A port no process listens on now (the kernel's choice for port 0); rank 0 binds it next.
Expected<int> freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return unavailable(std::string("launch: socket(): ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return unavailable(std::string("launch: cannot find a free port: ") + std::strerror(errno));
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

struct Stream {
  int fd = -1;
  std::string pending;  // a line not yet ended
  std::ostream* out = nullptr;
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  Stream streams[2];
};

void emitLines(int rank, Stream& s, bool flushPartial) {
  size_t start = 0;
  while (true) {
    size_t end = s.pending.find('\n', start);
    if (end == std::string::npos) break;
    *s.out << "[rank " << rank << "] " << s.pending.substr(start, end - start) << "\n";
    start = end + 1;
  }
  s.pending.erase(0, start);
  if (flushPartial && !s.pending.empty()) {
    *s.out << "[rank " << rank << "] " << s.pending << "\n";
    s.pending.clear();
  }
  s.out->flush();
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "ended with status " + std::to_string(status);
}

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailure;
}

}  // namespace

int runLaunch(const LaunchOptions& options) {
  if (options.command.empty()) {
    printError("launch: no command (warpforge launch -n N -- CMD ARGS...)");
    return kExitUsage;
  }
  int port = options.masterPort;
  if (port == 0) {
    auto free = freePort();
    if (!free) return reportStatus(free.status());
    port = *free;
  }
  const int n = options.numProcesses;
  std::vector<Rank> ranks(static_cast<size_t>(n));
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  for (int r = 0; r < n; ++r) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) {
      printError(std::string("launch: pipe(): ") + std::strerror(errno));
      return kExitFailure;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      printError(std::string("launch: fork(): ") + std::strerror(errno));
      return kExitFailure;
    }
    if (pid == 0) {
      ::setpgid(0, 0);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      ::close(err[0]);
      ::close(err[1]);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("GROUP_RANK", "0", 1);
      ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("MASTER_ADDR", options.masterAddr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      std::vector<char*> argv;
      for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::cerr << "warpforge: error: launch: cannot run '" << options.command[0] << "': " << std::strerror(errno)
                << "\n";
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so that a teardown right after fork reaches the group
    ::close(out[1]);
    ::close(err[1]);
    Rank& rank = ranks[static_cast<size_t>(r)];
    rank.pid = pid;
    rank.running = true;
    rank.streams[0] = {out[0], "", &std::cout};
    rank.streams[1] = {err[0], "", &std::cerr};
  }

  std::optional<int> failedRank;
  int failedStatus = 0;
  bool killPending = false;  // SIGKILL the ranks still running at killAt
  Clock::time_point killAt = Clock::now();
  auto stopOthers = [&](int except) {
    for (int r = 0; r < n; ++r)
      if (r != except && ranks[static_cast<size_t>(r)].running) ::kill(-ranks[static_cast<size_t>(r)].pid, SIGTERM);
    killPending = true;
    killAt = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.graceSeconds * 1000));
  };
  bool interruptHandled = false;
  std::vector<char> buffer(65536);
  while (true) {
    if (gInterrupted && !interruptHandled) {
      interruptHandled = true;
      std::cerr << "warpforge: launch: interrupted; stopping every rank\n";
      stopOthers(-1);
    }
    if (killPending && Clock::now() >= killAt) {
      for (Rank& rank : ranks)
        if (rank.running) ::kill(-rank.pid, SIGKILL);
      killPending = false;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<int, int>> owners;  // (rank, stream)
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 2; ++k)
        if (ranks[static_cast<size_t>(r)].streams[k].fd >= 0) {
          fds.push_back({ranks[static_cast<size_t>(r)].streams[k].fd, POLLIN, 0});
          owners.push_back({r, k});
        }
    bool anyRunning = false;
    for (const Rank& rank : ranks) anyRunning |= rank.running;
    if (fds.empty() && !anyRunning) break;
    int ready = fds.empty() ? 0 : ::poll(fds.data(), fds.size(), 100);
    if (fds.empty()) ::usleep(100 * 1000);
    if (ready < 0 && errno != EINTR) {
      printError(std::string("launch: poll(): ") + std::strerror(errno));
      stopOthers(-1);
    }
    for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [r, k] = owners[i];
      Stream& s = ranks[static_cast<size_t>(r)].streams[k];
      ssize_t got = ::read(s.fd, buffer.data(), buffer.size());
      if (got > 0) {
        s.pending.append(buffer.data(), static_cast<size_t>(got));
        emitLines(r, s, false);
      } else if (got == 0 || errno != EINTR) {
        emitLines(r, s, true);
        ::close(s.fd);
        s.fd = -1;
      }
    }
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks[static_cast<size_t>(r)];
      if (!rank.running) continue;
      int status = 0;
      if (::waitpid(rank.pid, &status, WNOHANG) != rank.pid) continue;
      rank.running = false;
      const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (failed && !failedRank && !gInterrupted) {
        failedRank = r;
        failedStatus = status;
        std::cerr << "warpforge: launch: rank " << r << " " << describeExit(status) << "; stopping the other ranks\n";
        stopOthers(r);
      }
    }
  }
  if (failedRank) {
    std::cerr << "warpforge: error: launch: the job failed: rank " << *failedRank << " " << describeExit(failedStatus)
              << "\n";
    const int code = exitCodeOf(failedStatus);
    return code == 0 ? kExitFailure : code;
  }
  if (gInterrupted) return 128 + gInterrupted;
  return kExitOk;
}

}  // namespace wf::cli
