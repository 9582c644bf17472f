// The job's key-value store over TCP, where ranks meet (like torch.distributed's TCPStore): rank 0
// serves it at MASTER_ADDR:MASTER_PORT, every rank (rank 0 included) is a client. Communicators
// exchange their addresses and unique ids through it; the store also knows which ranks left the
// job: each client says hello with its rank, and a connection that closes without a goodbye marks
// its rank as gone, so a collective that fails can name the rank that died.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/status.h"

namespace wf::dist {

class StoreServer;  // store.cpp

class TcpStore {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 29500;          // 0 with isServer: any free port (port() says which)
    bool isServer = false;     // serve the store (rank 0) as well as connect to it
    int rank = -1;             // announced to the server; -1: an anonymous client
    std::chrono::milliseconds timeout{std::chrono::seconds(300)};  // connecting, and each wait
  };

  // Starts the server (isServer) and connects, retrying until the server is up or the timeout.
  static Expected<std::unique_ptr<TcpStore>> create(const Options& options);
  // Says goodbye; the server (rank 0) then waits, up to the timeout, for every client that said
  // hello to say goodbye too, so that rank 0 leaving first does not break the others' last waits.
  ~TcpStore();
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  Status set(const std::string& key, const std::vector<uint8_t>& value);
  // Waits until `key` is set (up to the timeout) and returns its value.
  Expected<std::vector<uint8_t>> get(const std::string& key);
  // Adds `delta` to the integer at `key` (0 when unset) and returns the sum.
  Expected<int64_t> add(const std::string& key, int64_t delta);
  // Whether every key is set, without waiting.
  Expected<bool> check(const std::vector<std::string>& keys);
  // Waits until every key is set, up to `timeout`.
  Status wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Ranks whose connection closed without a goodbye, in the order they left.
  Expected<std::vector<int>> deadRanks();

  // Leaves without a goodbye (a rank that failed): the others see this rank as gone. A server
  // serves on until the other ranks are gone, at most 5 s (or the timeout), so that they can
  // still learn who left first. The store is unusable afterwards.
  void abandon();

  int port() const { return port_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  std::string address() const { return host_ + ":" + std::to_string(port_); }

 private:
  TcpStore() = default;
  // One request and its reply (serialised: the store is shared by threads).
  Expected<std::vector<uint8_t>> request(uint8_t command, const std::string& key, const std::vector<uint8_t>& value,
                                         int64_t number);
  Status unreachable(const std::string& what) const;

  std::unique_ptr<StoreServer> server_;
  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  int rank_ = -1;
  std::chrono::milliseconds timeout_{0};
  std::mutex mu_;
  Status broken_;  // set once the connection failed
};

}  // namespace wf::dist
