// The job's TCP key-value store (store.h): a server thread on rank 0 that polls its clients'
// sockets, and a blocking client. Wire format, both directions little-endian:
//   request: u8 command, u32 key length, key, u32 value length, value, i64 number
//   reply:   u8 outcome (0 ok, 1 timed out), u32 value length, value, i64 number
// GET and WAIT carry their timeout in `number` (milliseconds) and the server answers "timed out"
// when it passes, so a client never abandons a request half way and the stream stays in step.
#include "dist/store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

namespace wf::dist {

namespace {

enum Command : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4, kWait = 5, kHello = 6, kBye = 7, kDead = 8 };
enum Outcome : uint8_t { kOk = 0, kTimedOut = 1 };

using Clock = std::chrono::steady_clock;

void putU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void putI64(std::vector<uint8_t>& out, int64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}
uint32_t getU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
int64_t getI64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return static_cast<int64_t>(v);
}

// Several keys travel as one, separated by NUL.
std::string joinKeys(const std::vector<std::string>& keys) {
  std::string joined;
  for (size_t i = 0; i < keys.size(); ++i) joined += (i ? std::string(1, '\0') : std::string()) + keys[i];
  return joined;
}
std::vector<std::string> splitKeys(const std::string& joined) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    size_t end = joined.find('\0', start);
    keys.push_back(joined.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return keys;
}

bool writeAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::vector<uint8_t> encodeReply(Outcome outcome, const std::vector<uint8_t>& value, int64_t number) {
  std::vector<uint8_t> out;
  out.push_back(outcome);
  putU32(out, static_cast<uint32_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  putI64(out, number);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

class StoreServer {
 public:
  static Expected<std::unique_ptr<StoreServer>> start(const std::string& host, int port) {
    std::unique_ptr<StoreServer> server(new StoreServer());
    server->listenFd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (server->listenFd_ < 0) return unavailable("store: socket(): " + std::string(std::strerror(errno)));
    int one = 1;
    ::setsockopt(server->listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    // Listen on every interface: MASTER_ADDR names this host as the other ranks see it.
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(server->listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      return unavailable("store: cannot listen on port " + std::to_string(port) + " (MASTER_PORT) of " + host + ": " +
                         std::strerror(errno));
    if (::listen(server->listenFd_, 1024) != 0)
      return unavailable("store: listen(): " + std::string(std::strerror(errno)));
    socklen_t len = sizeof(addr);
    ::getsockname(server->listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
    server->port_ = ntohs(addr.sin_port);
    if (::pipe(server->wakePipe_) != 0) return unavailable("store: pipe(): " + std::string(std::strerror(errno)));
    server->thread_ = std::thread([s = server.get()] { s->loop(); });
    return server;
  }

  // Stops once every client that said hello has said goodbye or gone, or after `grace`.
  ~StoreServer() { stop(std::chrono::milliseconds(0)); }

  void stop(std::chrono::milliseconds grace) {
    if (!thread_.joinable()) return;
    stopDeadline_.store((Clock::now() + grace).time_since_epoch().count());
    stopping_.store(true);
    const uint8_t b = 1;
    ssize_t ignored = ::write(wakePipe_[1], &b, 1);
    (void)ignored;
    thread_.join();
    for (auto& [fd, client] : clients_) ::close(fd);
    ::close(listenFd_);
    ::close(wakePipe_[0]);
    ::close(wakePipe_[1]);
  }

  int port() const { return port_; }

 private:
  struct Client {
    std::vector<uint8_t> in;
    int rank = -1;
    bool saidBye = false;
  };
  struct Waiter {
    int fd;
    Command command;  // kGet or kWait
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };

  StoreServer() = default;

  bool allSet(const std::vector<std::string>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return data_.count(k) > 0; });
  }

  void reply(int fd, Outcome outcome, const std::vector<uint8_t>& value, int64_t number) {
    std::vector<uint8_t> out = encodeReply(outcome, value, number);
    // A client that vanished is noticed by poll(); a failed write needs nothing more here.
    (void)writeAll(fd, out.data(), out.size());
  }

  void answerWaiters() {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (allSet(it->keys)) {
        reply(it->fd, kOk, it->command == kGet ? data_[it->keys[0]] : std::vector<uint8_t>{}, 0);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void handle(int fd, Client& client, Command command, const std::string& key, std::vector<uint8_t> value,
              int64_t number) {
    switch (command) {
      case kSet:
        data_[key] = std::move(value);
        reply(fd, kOk, {}, 0);
        answerWaiters();
        break;
      case kAdd: {
        int64_t sum = number;
        if (auto it = data_.find(key); it != data_.end() && it->second.size() == 8) sum += getI64(it->second.data());
        std::vector<uint8_t> stored;
        putI64(stored, sum);
        data_[key] = stored;
        reply(fd, kOk, {}, sum);
        answerWaiters();
        break;
      }
      case kCheck:
        reply(fd, kOk, {}, allSet(splitKeys(key)) ? 1 : 0);
        break;
      case kGet:
      case kWait: {
        std::vector<std::string> keys = command == kGet ? std::vector<std::string>{key} : splitKeys(key);
        if (allSet(keys)) {
          reply(fd, kOk, command == kGet ? data_[key] : std::vector<uint8_t>{}, 0);
        } else {
          waiters_.push_back({fd, command, std::move(keys), Clock::now() + std::chrono::milliseconds(number)});
        }
        break;
      }
      case kHello:
        client.rank = static_cast<int>(number);
        reply(fd, kOk, {}, 0);
        break;
      case kBye:
        client.saidBye = true;
        reply(fd, kOk, {}, 0);
        break;
      case kDead: {
        std::vector<uint8_t> out;
        for (int r : dead_) putU32(out, static_cast<uint32_t>(r));
        reply(fd, kOk, out, static_cast<int64_t>(dead_.size()));
        break;
      }
      default:
        // A stranger speaking another protocol: drop it.
        client.saidBye = true;
        break;
    }
  }

  // Parses every complete request in the client's buffer.
  void consume(int fd, Client& client) {
    while (true) {
      std::vector<uint8_t>& in = client.in;
      if (in.size() < 5) return;
      const uint32_t keyLen = getU32(&in[1]);
      if (in.size() < 5 + keyLen + 4) return;
      const uint32_t valueLen = getU32(&in[5 + keyLen]);
      const size_t total = 5 + keyLen + 4 + valueLen + 8;
      if (in.size() < total) return;
      const auto command = static_cast<Command>(in[0]);
      std::string key(reinterpret_cast<const char*>(&in[5]), keyLen);
      std::vector<uint8_t> value(in.begin() + 9 + keyLen, in.begin() + 9 + keyLen + valueLen);
      const int64_t number = getI64(&in[9 + keyLen + valueLen]);
      in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(total));
      handle(fd, client, command, key, std::move(value), number);
    }
  }

  void drop(int fd) {
    Client& c = clients_[fd];
    if (c.rank >= 0 && !c.saidBye && std::find(dead_.begin(), dead_.end(), c.rank) == dead_.end())
      dead_.push_back(c.rank);
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), [fd](const Waiter& w) { return w.fd == fd; }),
                   waiters_.end());
    ::close(fd);
    clients_.erase(fd);
  }

  bool everyoneLeft() const {
    return std::all_of(clients_.begin(), clients_.end(),
                       [](const auto& entry) { return entry.second.rank < 0 || entry.second.saidBye; });
  }

  void loop() {
    std::vector<uint8_t> buffer(64 * 1024);
    while (true) {
      const Clock::time_point now = Clock::now();
      if (stopping_.load()) {
        const Clock::time_point deadline{Clock::duration(stopDeadline_.load())};
        if (everyoneLeft() || now >= deadline) return;
      }
      // Time out the waits that are due.
      int pollMs = 100;
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        if (it->deadline <= now) {
          reply(it->fd, kTimedOut, {}, 0);
          it = waiters_.erase(it);
        } else {
          pollMs = std::min<int>(
              pollMs, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(it->deadline - now).count()) + 1);
          ++it;
        }
      }
      std::vector<pollfd> fds;
      fds.push_back({listenFd_, POLLIN, 0});
      fds.push_back({wakePipe_[0], POLLIN, 0});
      for (const auto& [fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
      int n = ::poll(fds.data(), fds.size(), pollMs);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents & POLLIN) {
        int fd = ::accept(listenFd_, nullptr, nullptr);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          clients_[fd] = Client{};
        }
      }
      if (fds[1].revents & POLLIN) {
        uint8_t b[16];
        ssize_t ignored = ::read(wakePipe_[0], b, sizeof(b));
        (void)ignored;
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const int fd = fds[i].fd;
        ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (got <= 0) {
          if (got < 0 && errno == EINTR) continue;
          drop(fd);
          continue;
        }
        Client& client = clients_[fd];
        client.in.insert(client.in.end(), buffer.begin(), buffer.begin() + got);
        consume(fd, client);
      }
    }
  }

  int listenFd_ = -1;
  int port_ = 0;
  int wakePipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<Clock::rep> stopDeadline_{0};
  // Owned by the server thread.
  std::map<int, Client> clients_;
  std::map<std::string, std::vector<uint8_t>> data_;
  std::vector<Waiter> waiters_;
  std::vector<int> dead_;  // in the order they left
};

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

namespace {

// Connects to host:port, retrying while the server is not up yet.
Expected<int> connectTo(const std::string& host, int port, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::string lastError = "no attempt";
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) {
      lastError = std::string("cannot resolve ") + host + ": " + gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          ::freeaddrinfo(found);
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return fd;
        }
        lastError = std::strerror(errno);
        ::close(fd);
      }
      ::freeaddrinfo(found);
    }
    if (Clock::now() >= deadline)
      return unavailable("store: cannot connect to " + host + ":" + std::to_string(port) +
                         " (MASTER_ADDR:MASTER_PORT, served by rank 0) within " +
                         std::to_string(timeout.count() / 1000.0) + " s: " + lastError);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Expected<std::unique_ptr<TcpStore>> TcpStore::create(const Options& options) {
  std::unique_ptr<TcpStore> store(new TcpStore());
  store->host_ = options.host;
  store->port_ = options.port;
  store->rank_ = options.rank;
  store->timeout_ = options.timeout;
  if (options.isServer) {
    WF_ASSIGN_OR_RETURN(store->server_, StoreServer::start(options.host, options.port));
    store->port_ = store->server_->port();
  }
  const std::string connectHost = options.isServer ? std::string("127.0.0.1") : options.host;
  WF_ASSIGN_OR_RETURN(store->fd_, connectTo(connectHost, store->port_, options.timeout));
  if (options.rank >= 0) WF_RETURN_IF_ERROR(store->request(kHello, "", {}, options.rank).status());
  return store;
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) {
    if (broken_.isOk()) (void)request(kBye, "", {}, 0);
    ::close(fd_);
  }
  if (server_) server_->stop(timeout_);
}

void TcpStore::abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  broken_ = unavailable("store: this rank left the job");
  // Rank 0 keeps serving a little while, until the other ranks are gone: they ask the store which
  // rank left first when their own operations fail.
  if (server_) server_->stop(std::min<std::chrono::milliseconds>(timeout_, std::chrono::seconds(5)));
}

Status TcpStore::unreachable(const std::string& what) const {
  return unavailable("store: lost the connection to the job's store at " + address() + " during " + what +
                     " (rank 0, which serves it, may have left the job)");
}

Expected<std::vector<uint8_t>> TcpStore::request(uint8_t command, const std::string& key,
                                                 const std::vector<uint8_t>& value, int64_t number) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_.isOk()) return broken_;
  std::vector<uint8_t> out;
  out.push_back(command);
  putU32(out, static_cast<uint32_t>(key.size()));
  out.insert(out.end(), key.begin(), key.end());
  putU32(out, static_cast<uint32_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  putI64(out, number);
  const std::string what = "a request for '" + key + "'";
  if (!writeAll(fd_, out.data(), out.size())) return broken_ = unreachable(what);
  uint8_t head[5];
  if (!readAll(fd_, head, sizeof(head))) return broken_ = unreachable(what);
  std::vector<uint8_t> reply(getU32(&head[1]) + 8);
  if (!readAll(fd_, reply.data(), reply.size())) return broken_ = unreachable(what);
  if (head[0] == kTimedOut)
    return unavailable("store: timed out after " + std::to_string(number / 1000.0) + " s waiting for '" + key + "'");
  return reply;  // the value, then the 8-byte number
}

Status TcpStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  return request(kSet, key, value, 0).status();
}

Expected<std::vector<uint8_t>> TcpStore::get(const std::string& key) {
  WF_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, request(kGet, key, {}, timeout_.count()));
  reply.resize(reply.size() - 8);
  return reply;
}

Expected<int64_t> TcpStore::add(const std::string& key, int64_t delta) {
  WF_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, request(kAdd, key, {}, delta));
  return getI64(reply.data() + reply.size() - 8);
}

Expected<bool> TcpStore::check(const std::vector<std::string>& keys) {
  WF_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, request(kCheck, joinKeys(keys), {}, 0));
  return getI64(reply.data() + reply.size() - 8) != 0;
}

Status TcpStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  return request(kWait, joinKeys(keys), {}, timeout.count()).status();
}

Expected<std::vector<int>> TcpStore::deadRanks() {
  WF_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, request(kDead, "", {}, 0));
  std::vector<int> ranks;
  for (size_t i = 0; i + 4 <= reply.size() - 8; i += 4) ranks.push_back(static_cast<int>(getU32(&reply[i])));
  return ranks;
}

}  // namespace wf::dist
