// The Communicator over Gloo (gloo_communicator.h). Collectives run on one worker thread per
// communicator, in the order they were issued (so every rank runs them in the same order, and a
// Work is a future of that thread); point-to-point transfers are posted on the caller's thread
// and waited for in Work::wait. Every Gloo call carries the communicator's timeout; an exception
// from Gloo (a peer's connection closed, a wait timed out) becomes an error naming the rank that
// left the job (failure.h), and breaks the communicator.
#include "dist/gloo_communicator.h"

#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <type_traits>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "dist/failure.h"
#include "ir/float_types.h"

namespace wf::dist {

namespace {

// Gloo's rendezvous reads and writes the job's TcpStore through this. Gloo expects exceptions.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<TcpStore> store) : store_(std::move(store)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Status s = store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
    if (!s.isOk()) throw std::runtime_error(s.message());
  }
  std::vector<char> get(const std::string& key) override {
    Expected<std::vector<uint8_t>> v = store_->get(key);
    if (!v) throw std::runtime_error(v.status().message());
    return std::vector<char>(v->begin(), v->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, store_->timeout()); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    Status s = store_->wait(keys, timeout);
    if (!s.isOk()) throw std::runtime_error(s.message());
  }

 private:
  std::shared_ptr<TcpStore> store_;
};

// --- element-wise reductions for Gloo's allreduce: out[i] = a[i] . b[i] ----------------------

template <typename T>
struct Native {
  using Compute = T;
  static Compute load(T v) { return v; }
  static T store(Compute v) { return v; }
};
// 16-bit floats compute in float and round once per step, as torch's gloo backend does.
struct Half {
  using Compute = float;
  static float load(uint16_t v) { return f16ToFloat(v); }
  static uint16_t store(float v) { return floatToF16(v); }
};
struct BHalf {
  using Compute = float;
  static float load(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t store(float v) { return floatToBf16(v); }
};

// The type a value computes sums and products in: unsigned for integers (wrapping), itself else.
template <typename C, bool = std::is_integral_v<C>>
struct WrapOf {
  using type = C;
};
template <typename C>
struct WrapOf<C, true> {
  using type = std::make_unsigned_t<C>;
};

template <typename C>
bool isNan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  return false;
}

template <typename T, typename Codec>
gloo::AllreduceOptions::Func reductionOf(ReduceOp op) {
  using C = typename Codec::Compute;
  // Signed integers wrap (two's complement, as StableHLO's add and multiply do) through their
  // unsigned type; floating max and min propagate NaN, as StableHLO's maximum and minimum do.
  using W = typename WrapOf<C>::type;
  // One loop per operation, the operation inlined in it (the loop vectorises).
  auto loop = [](auto f) -> gloo::AllreduceOptions::Func {
    return [f](void* out, const void* a, const void* b, size_t n) {
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(a);
      const T* y = static_cast<const T*>(b);
      for (size_t i = 0; i < n; ++i) o[i] = Codec::store(f(Codec::load(x[i]), Codec::load(y[i])));
    };
  };
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return loop([](C a, C b) { return static_cast<C>(static_cast<W>(a) + static_cast<W>(b)); });
    case ReduceOp::kProduct: return loop([](C a, C b) { return static_cast<C>(static_cast<W>(a) * static_cast<W>(b)); });
    case ReduceOp::kMax: return loop([](C a, C b) { return isNan(a) ? a : isNan(b) ? b : a < b ? b : a; });
    case ReduceOp::kMin: return loop([](C a, C b) { return isNan(a) ? a : isNan(b) ? b : b < a ? b : a; });
  }
  return loop([](C a, C b) { return static_cast<C>(static_cast<W>(a) + static_cast<W>(b)); });
}

// Calls fn.template operator()<T, Codec>() for `type`.
template <typename Fn>
auto dispatch(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kInt8: return fn.template operator()<int8_t, Native<int8_t>>();
    case DataType::kUInt8: return fn.template operator()<uint8_t, Native<uint8_t>>();
    case DataType::kInt32: return fn.template operator()<int32_t, Native<int32_t>>();
    case DataType::kUInt32: return fn.template operator()<uint32_t, Native<uint32_t>>();
    case DataType::kInt64: return fn.template operator()<int64_t, Native<int64_t>>();
    case DataType::kUInt64: return fn.template operator()<uint64_t, Native<uint64_t>>();
    case DataType::kFloat16: return fn.template operator()<uint16_t, Half>();
    case DataType::kBFloat16: return fn.template operator()<uint16_t, BHalf>();
    case DataType::kFloat32: return fn.template operator()<float, Native<float>>();
    case DataType::kFloat64: return fn.template operator()<double, Native<double>>();
  }
  return fn.template operator()<uint8_t, Native<uint8_t>>();
}

bool isFloating(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 || t == DataType::kFloat64;
}

// Divides `count` elements by `divisor` in place (kAvg after the sum).
void divideBy(void* data, size_t count, DataType type, int divisor) {
  dispatch(type, [&]<typename T, typename Codec>() {
    T* p = static_cast<T*>(data);
    for (size_t i = 0; i < count; ++i)
      p[i] = Codec::store(static_cast<typename Codec::Compute>(Codec::load(p[i]) / divisor));
  });
}

// --- work handles ------------------------------------------------------------------------------

class FutureWork final : public Work {
 public:
  explicit FutureWork(std::shared_future<Status> future) : future_(std::move(future)) {}
  Status wait() override { return future_.get(); }
  bool done() override { return future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

 private:
  std::shared_future<Status> future_;
};

class ReadyWork final : public Work {
 public:
  explicit ReadyWork(Status status) : status_(std::move(status)) {}
  Status wait() override { return status_; }
  bool done() override { return true; }

 private:
  Status status_;
};

class GlooCommunicator;

// A posted send or receive; wait() waits for Gloo to finish it.
class PointToPointWork final : public Work {
 public:
  PointToPointWork(GlooCommunicator* comm, std::unique_ptr<gloo::transport::UnboundBuffer> buffer, bool isSend,
                   std::string what)
      : comm_(comm), buffer_(std::move(buffer)), isSend_(isSend), what_(std::move(what)) {}
  Status wait() override;
  bool done() override { return finished_; }

 private:
  GlooCommunicator* comm_;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  bool isSend_;
  std::string what_;
  std::mutex mu_;
  bool finished_ = false;
  Status status_;
};

// --- the communicator --------------------------------------------------------------------------

class GlooCommunicator final : public Communicator, public std::enable_shared_from_this<GlooCommunicator> {
 public:
  GlooCommunicator(std::shared_ptr<TcpStore> store, std::shared_ptr<gloo::transport::Device> device,
                   std::shared_ptr<gloo::rendezvous::Context> context, std::string prefix,
                   std::chrono::milliseconds timeout, std::string masterAddr)
      : store_(std::move(store)),
        device_(std::move(device)),
        context_(std::move(context)),
        prefix_(std::move(prefix)),
        timeout_(timeout),
        masterAddr_(std::move(masterAddr)) {
    worker_ = std::thread([this] { workLoop(); });
  }

  ~GlooCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  std::string backend() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  std::unique_ptr<Work> allReduce(void* data, size_t count, DataType type, ReduceOp op, StreamHandle) override {
    if (op == ReduceOp::kAvg && !isFloating(type))
      return failed(invalidArgument(std::string("all_reduce avg needs a floating-point type, got ") + dataTypeName(type)));
    return enqueue("all_reduce", [=, this] {
      if (count == 0) return;
      gloo::AllreduceOptions opts(context_);
      opts.setTimeout(timeout_);
      dispatch(type, [&]<typename T, typename Codec>() {
        opts.setOutput(static_cast<T*>(data), count);
        opts.setReduceFunction(reductionOf<T, Codec>(op));
      });
      gloo::allreduce(opts);
      if (op == ReduceOp::kAvg) divideBy(data, count, type, size());
    });
  }

  std::unique_ptr<Work> allGather(const void* send, void* recv, size_t count, DataType type, StreamHandle) override {
    const size_t bytes = count * dataTypeBytes(type);
    return enqueue("all_gather", [=, this] {
      if (bytes == 0) return;
      gloo::AllgatherOptions opts(context_);
      opts.setTimeout(timeout_);
      opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(send)), bytes);
      opts.setOutput(static_cast<uint8_t*>(recv), bytes * static_cast<size_t>(size()));
      gloo::allgather(opts);
    });
  }

  // An all-to-all of the blocks, then each rank folds the blocks it received: every rank sends
  // (size - 1) / size of its data once, as a ring reduce-scatter does.
  std::unique_ptr<Work> reduceScatter(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                                      StreamHandle) override {
    if (op == ReduceOp::kAvg && !isFloating(type))
      return failed(
          invalidArgument(std::string("reduce_scatter avg needs a floating-point type, got ") + dataTypeName(type)));
    return enqueue("reduce_scatter", [=, this] {
      const size_t bytes = count * dataTypeBytes(type);
      if (bytes == 0) return;
      const auto n = static_cast<size_t>(size());
      std::vector<uint8_t> blocks(bytes * n);
      runAllToAll(send, blocks.data(), bytes);
      std::memcpy(recv, blocks.data(), bytes);
      dispatch(type, [&]<typename T, typename Codec>() {
        gloo::AllreduceOptions::Func fold = reductionOf<T, Codec>(op);
        for (size_t k = 1; k < n; ++k) fold(recv, recv, blocks.data() + k * bytes, count);
      });
      if (op == ReduceOp::kAvg) divideBy(recv, count, type, size());
    });
  }

  std::unique_ptr<Work> broadcast(void* data, size_t count, DataType type, int root, StreamHandle) override {
    if (root < 0 || root >= size())
      return failed(invalidArgument("broadcast: root " + std::to_string(root) + " is outside a communicator of " +
                                    std::to_string(size()) + " ranks"));
    const size_t bytes = count * dataTypeBytes(type);
    return enqueue("broadcast", [=, this] {
      if (bytes == 0) return;
      gloo::BroadcastOptions opts(context_);
      opts.setTimeout(timeout_);
      opts.setRoot(root);
      opts.setOutput(static_cast<uint8_t*>(data), bytes);
      gloo::broadcast(opts);
    });
  }

  std::unique_ptr<Work> allToAll(const void* send, void* recv, size_t count, DataType type, StreamHandle) override {
    const size_t bytes = count * dataTypeBytes(type);
    return enqueue("all_to_all", [=, this] {
      if (bytes > 0) runAllToAll(send, recv, bytes);
    });
  }

  std::unique_ptr<Work> barrier(StreamHandle) override {
    return enqueue("barrier", [this] {
      gloo::BarrierOptions opts(context_);
      opts.setTimeout(timeout_);
      gloo::barrier(opts);
    });
  }

  std::unique_ptr<Work> send(const void* data, size_t count, DataType type, int peer, uint32_t tag,
                             StreamHandle) override {
    return pointToPoint(const_cast<void*>(data), count * dataTypeBytes(type), peer, tag, /*isSend=*/true);
  }

  std::unique_ptr<Work> recv(void* data, size_t count, DataType type, int peer, uint32_t tag, StreamHandle) override {
    return pointToPoint(data, count * dataTypeBytes(type), peer, tag, /*isSend=*/false);
  }

  Expected<std::shared_ptr<Communicator>> group(const std::vector<int>& ranks) override {
    std::lock_guard<std::mutex> lock(groupsMu_);
    if (auto it = groups_.find(ranks); it != groups_.end()) return it->second;
    int self = -1;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] < 0 || ranks[i] >= size() || (i > 0 && ranks[i] <= ranks[i - 1]))
        return invalidArgument("group: ranks must be ascending ranks of a communicator of " + std::to_string(size()));
      if (ranks[i] == rank()) self = static_cast<int>(i);
    }
    if (self < 0) return invalidArgument("group: rank " + std::to_string(rank()) + " is not among the group's ranks");
    std::string prefix = prefix_ + "/group";
    for (int r : ranks) prefix += "." + std::to_string(r);
    WF_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> comm,
                        connect(store_, device_, prefix, self, static_cast<int>(ranks.size()), timeout_, masterAddr_));
    groups_[ranks] = comm;
    return comm;
  }

  // Builds the Gloo context of `size` ranks under `prefix` (a full mesh of connections).
  static Expected<std::shared_ptr<Communicator>> connect(std::shared_ptr<TcpStore> store,
                                                         std::shared_ptr<gloo::transport::Device> device,
                                                         const std::string& prefix, int rank, int size,
                                                         std::chrono::milliseconds timeout,
                                                         const std::string& masterAddr) {
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    try {
      GlooStore glooStore(store);
      gloo::rendezvous::PrefixStore prefixed(prefix, glooStore);
      context->connectFullMesh(prefixed, device);
    } catch (const std::exception& e) {
      return peerFailure(*store, "gloo: connecting rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                     " (" + prefix + ")",
                         e.what(), timeout);
    }
    return std::shared_ptr<Communicator>(
        std::make_shared<GlooCommunicator>(store, device, context, prefix, timeout, masterAddr));
  }

  // The error of a failed Gloo call (it breaks the communicator).
  Status fail(const std::string& what, const std::string& cause) {
    Status s = peerFailure(*store_, "gloo " + what + " (rank " + std::to_string(rank()) + " of " +
                                        std::to_string(size()) + ")",
                           cause, timeout_);
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_.isOk()) broken_ = s;
    return s;
  }

  Status brokenStatus() {
    std::lock_guard<std::mutex> lock(mu_);
    return broken_;
  }

 private:
  std::unique_ptr<Work> failed(Status s) { return std::make_unique<ReadyWork>(std::move(s)); }

  void runAllToAll(const void* send, void* recv, size_t blockBytes) {
    gloo::AlltoallOptions opts(context_);
    opts.setTimeout(timeout_);
    const size_t total = blockBytes * static_cast<size_t>(size());
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(send)), total);
    opts.setOutput(static_cast<uint8_t*>(recv), total);
    gloo::alltoall(opts);
  }

  std::unique_ptr<Work> enqueue(const char* what, std::function<void()> body) {
    auto task = std::make_shared<std::packaged_task<Status()>>([this, what, body = std::move(body)]() -> Status {
      Status broken = brokenStatus();
      if (!broken.isOk()) return Status(broken.code(), std::string("gloo ") + what + ": the communicator is broken by " +
                                                           "an earlier failure: " + broken.message());
      try {
        body();
        return Status::ok();
      } catch (const std::exception& e) {
        return fail(what, e.what());
      }
    });
    std::shared_future<Status> future = task->get_future().share();
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back([task] { (*task)(); });
    }
    cv_.notify_one();
    return std::make_unique<FutureWork>(std::move(future));
  }

  std::unique_ptr<Work> pointToPoint(void* data, size_t bytes, int peer, uint32_t tag, bool isSend) {
    const std::string what = std::string(isSend ? "send to" : "recv from") + " rank " + std::to_string(peer);
    if (peer < 0 || peer >= size() || peer == rank())
      return failed(invalidArgument("gloo " + what + ": the peer must be another rank of a communicator of " +
                                    std::to_string(size())));
    Status broken = brokenStatus();
    if (!broken.isOk()) return failed(broken);
    // Gloo needs a buffer to post even for an empty message.
    static uint8_t empty = 0;
    try {
      auto buffer = context_->createUnboundBuffer(bytes ? data : &empty, bytes ? bytes : 1);
      if (isSend) {
        buffer->send(peer, tag);
      } else {
        buffer->recv(peer, tag);
      }
      return std::make_unique<PointToPointWork>(this, std::move(buffer), isSend, what);
    } catch (const std::exception& e) {
      return failed(fail(what, e.what()));
    }
  }

  void workLoop() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, with nothing left to run
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::shared_ptr<TcpStore> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  std::string masterAddr_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  Status broken_;
  std::thread worker_;

  std::mutex groupsMu_;
  std::map<std::vector<int>, std::shared_ptr<Communicator>> groups_;
};

Status PointToPointWork::wait() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return status_;
  try {
    const bool completed = isSend_ ? buffer_->waitSend(comm_->timeout()) : buffer_->waitRecv(comm_->timeout());
    if (!completed) status_ = comm_->fail(what_, "the transfer was aborted");
  } catch (const std::exception& e) {
    status_ = comm_->fail(what_, e.what());
  }
  finished_ = true;
  return status_;
}

bool isLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

Expected<std::shared_ptr<Communicator>> createGlooCommunicator(std::shared_ptr<TcpStore> store, int rank, int size,
                                                               std::chrono::milliseconds timeout,
                                                               const std::string& masterAddr) {
  if (size < 1 || rank < 0 || rank >= size)
    return invalidArgument("gloo: rank " + std::to_string(rank) + " is outside a world of " + std::to_string(size));
  gloo::transport::tcp::attr attr;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    attr.iface = iface;
  } else if (isLoopback(masterAddr)) {
    attr.hostname = "127.0.0.1";
  } else {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0)
      return unavailable("gloo: gethostname() failed; set GLOO_SOCKET_IFNAME to the interface the ranks share");
    attr.hostname = name;
  }
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    return unavailable(std::string("gloo: cannot open the TCP transport on ") +
                       (attr.iface.empty() ? "host " + attr.hostname : "interface " + attr.iface) + ": " + e.what());
  }
  return GlooCommunicator::connect(std::move(store), std::move(device), "gloo/world", rank, size, timeout, masterAddr);
}

}  // namespace wf::dist
