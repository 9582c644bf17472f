// The Communicator over NCCL (nccl_communicator.h). Every NCCL and CUDA call is checked; NCCL runs
// non-blocking, so no call can hang: a call that returns ncclInProgress is polled with
// ncclCommGetAsyncError up to the timeout, and a Work polls its event the same way. A failure
// aborts the NCCL communicator (ncclCommAbort, which frees every rank blocked on it) and breaks
// this one; its error names the ranks that left the job (failure.h).
#include "dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "dist/failure.h"

namespace wf::dist {

namespace {

using Clock = std::chrono::steady_clock;

std::string cudaText(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }
std::string ncclText(ncclResult_t r) { return std::string("NCCL error ") + std::to_string(r) + ": " + ncclGetErrorString(r); }

#define WF_NCCL_CUDA_CHECK(expr)                                                          \
  do {                                                                                   \
    cudaError_t wf_cuda_error_ = (expr);                                                 \
    if (wf_cuda_error_ != cudaSuccess)                                                   \
      return internalError(std::string("nccl: ") + #expr + ": " + cudaText(wf_cuda_error_)); \
  } while (0)

Expected<ncclDataType_t> ncclTypeOf(DataType t) {
  switch (t) {
    case DataType::kInt8: return ncclInt8;
    case DataType::kUInt8: return ncclUint8;
    case DataType::kInt32: return ncclInt32;
    case DataType::kUInt32: return ncclUint32;
    case DataType::kInt64: return ncclInt64;
    case DataType::kUInt64: return ncclUint64;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat64: return ncclFloat64;
  }
  return invalidArgument("nccl: unknown data type");
}

bool isFloating(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 || t == DataType::kFloat64;
}

ncclRedOp_t ncclOpOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAvg: return ncclAvg;
    case ReduceOp::kProduct: return ncclProd;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

class ReadyWork final : public Work {
 public:
  explicit ReadyWork(Status s) : status_(std::move(s)) {}
  Status wait() override { return status_; }
  bool done() override { return true; }

 private:
  Status status_;
};

// An NCCL communicator handle with its device; creation and teardown (RAII).
class NcclComm {
 public:
  NcclComm(ncclComm_t comm, int device) : comm_(comm), device_(device) {}
  ~NcclComm() {
    if (!comm_) return;
    cudaSetDevice(device_);
    if (aborted_) return;
    // A communicator still usable is finalized (its outstanding work flushed) before it is
    // destroyed; one that failed is aborted.
    ncclResult_t r = ncclCommFinalize(comm_);
    ncclResult_t state = r;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
    while (state == ncclInProgress && Clock::now() < deadline) {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
      if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (state == ncclSuccess) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
  }
  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }
  void abort() {
    if (aborted_) return;
    aborted_ = true;
    cudaSetDevice(device_);
    ncclCommAbort(comm_);
  }
  bool aborted() const { return aborted_; }

 private:
  ncclComm_t comm_;
  int device_;
  bool aborted_ = false;
};

// Waits until the non-blocking communicator has no call in progress: ok, the NCCL error, or
// "timed out".
Status settle(ncclComm_t comm, ncclResult_t first, Clock::time_point deadline, const std::string& what) {
  ncclResult_t state = first;
  // NCCL takes a call within microseconds as a rule, and the device may be idle until it has:
  // poll without sleeping for the first 200 us (a sleep costs 50 us or more of latency per
  // collective, paid by every gradient bucket of a step), then every 50 us.
  const Clock::time_point spinUntil = Clock::now() + std::chrono::microseconds(200);
  while (state == ncclInProgress) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return unavailable(what + ": timed out");
    if (now < spinUntil)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess) return unavailable(what + ": ncclCommGetAsyncError: " + ncclText(r));
  }
  if (state != ncclSuccess) return unavailable(what + ": " + ncclText(state));
  return Status::ok();
}

class NcclCommunicator;

class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<NcclCommunicator> owner, cudaEvent_t event, std::string what)
      : owner_(std::move(owner)), event_(event), what_(std::move(what)) {}
  ~NcclWork() override {
    if (event_) cudaEventDestroy(event_);
  }
  Status wait() override;
  bool done() override {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_ || cudaEventQuery(event_) != cudaErrorNotReady;
  }

 private:
  std::shared_ptr<NcclCommunicator> owner_;
  cudaEvent_t event_;
  std::string what_;
  std::mutex mu_;
  bool finished_ = false;
  Status status_;
};

class NcclCommunicator final : public Communicator, public std::enable_shared_from_this<NcclCommunicator> {
 public:
  NcclCommunicator(std::shared_ptr<TcpStore> store, std::unique_ptr<NcclComm> comm, cudaStream_t stream, int* scratch,
                   int rank, int size, std::chrono::milliseconds timeout, std::string key)
      : store_(std::move(store)),
        comm_(std::move(comm)),
        stream_(stream),
        scratch_(scratch),
        rank_(rank),
        size_(size),
        timeout_(timeout),
        key_(std::move(key)) {}

  ~NcclCommunicator() override {
    cudaSetDevice(comm_->device());
    if (stream_) cudaStreamSynchronize(stream_);
    comm_.reset();
    if (scratch_) cudaFree(scratch_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  // Creates the NCCL communicator of `size` ranks: rank 0 publishes the unique id under `key`.
  static Expected<std::shared_ptr<Communicator>> create(std::shared_ptr<TcpStore> store, int rank, int size,
                                                        int device, std::chrono::milliseconds timeout,
                                                        const std::string& key) {
    if (size < 1 || rank < 0 || rank >= size)
      return invalidArgument("nccl: rank " + std::to_string(rank) + " is outside a world of " + std::to_string(size));
    WF_NCCL_CUDA_CHECK(cudaSetDevice(device));
    ncclUniqueId id;
    if (rank == 0) {
      ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) return unavailable("nccl: ncclGetUniqueId: " + ncclText(r));
      const auto* p = reinterpret_cast<const uint8_t*>(&id);
      WF_RETURN_IF_ERROR(store->set(key, std::vector<uint8_t>(p, p + sizeof(id))));
    } else {
      Expected<std::vector<uint8_t>> bytes = store->get(key);
      if (!bytes) return bytes.status().withContext("nccl: waiting for rank 0's unique id");
      if (bytes->size() != sizeof(id))
        return internalError("nccl: the unique id under '" + key + "' has " + std::to_string(bytes->size()) + " bytes");
      std::memcpy(&id, bytes->data(), sizeof(id));
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call returns at once; waits are ours, and bounded
    ncclComm_t raw = nullptr;
    ncclResult_t r = ncclCommInitRankConfig(&raw, size, id, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) return unavailable("nccl: ncclCommInitRankConfig: " + ncclText(r));
    auto comm = std::make_unique<NcclComm>(raw, device);
    Status ready = settle(raw, r, Clock::now() + timeout, "nccl: initializing rank " + std::to_string(rank));
    if (!ready.isOk()) {
      comm->abort();
      return peerFailure(*store, "nccl: creating the communicator of " + std::to_string(size) + " ranks",
                         ready.message(), timeout);
    }
    cudaStream_t stream = nullptr;
    WF_NCCL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int* scratch = nullptr;
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&scratch), sizeof(int));
    if (e != cudaSuccess) {
      cudaStreamDestroy(stream);
      return internalError("nccl: cudaMalloc of the barrier's scratch: " + cudaText(e));
    }
    return std::shared_ptr<Communicator>(std::make_shared<NcclCommunicator>(store, std::move(comm), stream, scratch,
                                                                             rank, size, timeout, key));
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  std::unique_ptr<Work> allReduce(void* data, size_t count, DataType type, ReduceOp op, StreamHandle stream) override {
    if (op == ReduceOp::kAvg && !isFloating(type))
      return ready(invalidArgument(std::string("nccl all_reduce avg needs a floating-point type, got ") +
                                   dataTypeName(type)));
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    return issue("all_reduce", stream, [&](cudaStream_t s) {
      return ncclAllReduce(data, data, count, *t, ncclOpOf(op), comm_->get(), s);
    });
  }

  std::unique_ptr<Work> allGather(const void* send, void* recv, size_t count, DataType type,
                                  StreamHandle stream) override {
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    return issue("all_gather", stream,
                 [&](cudaStream_t s) { return ncclAllGather(send, recv, count, *t, comm_->get(), s); });
  }

  std::unique_ptr<Work> reduceScatter(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                                      StreamHandle stream) override {
    if (op == ReduceOp::kAvg && !isFloating(type))
      return ready(invalidArgument(std::string("nccl reduce_scatter avg needs a floating-point type, got ") +
                                   dataTypeName(type)));
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    return issue("reduce_scatter", stream, [&](cudaStream_t s) {
      return ncclReduceScatter(send, recv, count, *t, ncclOpOf(op), comm_->get(), s);
    });
  }

  std::unique_ptr<Work> broadcast(void* data, size_t count, DataType type, int root, StreamHandle stream) override {
    if (root < 0 || root >= size_)
      return ready(invalidArgument("nccl broadcast: root " + std::to_string(root) + " is outside a communicator of " +
                                   std::to_string(size_) + " ranks"));
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    return issue("broadcast", stream,
                 [&](cudaStream_t s) { return ncclBroadcast(data, data, count, *t, root, comm_->get(), s); });
  }

  // NCCL has no all-to-all: grouped point-to-point transfers, as torch's NCCL backend does.
  std::unique_ptr<Work> allToAll(const void* send, void* recv, size_t count, DataType type,
                                 StreamHandle stream) override {
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    const size_t blockBytes = count * dataTypeBytes(type);
    return issue("all_to_all", stream, [&](cudaStream_t s) -> ncclResult_t {
      ncclResult_t r = ncclGroupStart();
      if (r != ncclSuccess) return r;
      for (int peer = 0; peer < size_; ++peer) {
        const auto offset = static_cast<size_t>(peer) * blockBytes;
        r = ncclSend(static_cast<const uint8_t*>(send) + offset, count, *t, peer, comm_->get(), s);
        if (r != ncclSuccess && r != ncclInProgress) break;
        r = ncclRecv(static_cast<uint8_t*>(recv) + offset, count, *t, peer, comm_->get(), s);
        if (r != ncclSuccess && r != ncclInProgress) break;
      }
      ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess && r != ncclInProgress ? r : end;
    });
  }

  // An all-reduce of one integer on the device.
  std::unique_ptr<Work> barrier(StreamHandle stream) override {
    return issue("barrier", stream,
                 [&](cudaStream_t s) { return ncclAllReduce(scratch_, scratch_, 1, ncclInt32, ncclSum, comm_->get(), s); });
  }

  // NCCL matches transfers between two ranks in issue order; the tag is not needed.
  std::unique_ptr<Work> send(const void* data, size_t count, DataType type, int peer, uint32_t,
                             StreamHandle stream) override {
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    if (peer < 0 || peer >= size_ || peer == rank_) return ready(invalidArgument("nccl send: bad peer " + std::to_string(peer)));
    return issue("send to rank " + std::to_string(peer), stream,
                 [&](cudaStream_t s) { return ncclSend(data, count, *t, peer, comm_->get(), s); });
  }

  std::unique_ptr<Work> recv(void* data, size_t count, DataType type, int peer, uint32_t, StreamHandle stream) override {
    Expected<ncclDataType_t> t = ncclTypeOf(type);
    if (!t) return ready(t.status());
    if (peer < 0 || peer >= size_ || peer == rank_) return ready(invalidArgument("nccl recv: bad peer " + std::to_string(peer)));
    return issue("recv from rank " + std::to_string(peer), stream,
                 [&](cudaStream_t s) { return ncclRecv(data, count, *t, peer, comm_->get(), s); });
  }

  // One NCCL group (ncclGroupStart/End) of every operation: one launch, one event. Arguments
  // are checked before NCCL sees any of them, so a bad one fails the batch on this rank alone.
  std::unique_ptr<Work> batch(const std::vector<CollectiveOp>& ops, StreamHandle stream) override {
    std::vector<ncclDataType_t> types;
    bool sameKind = true;
    for (const CollectiveOp& op : ops) {
      const std::string name = collectiveKindName(op.kind);
      sameKind = sameKind && op.kind == ops.front().kind;
      Expected<ncclDataType_t> t = ncclTypeOf(op.type);
      if (!t) return ready(t.status());
      types.push_back(*t);
      const bool reduces = op.kind == CollectiveOp::Kind::kAllReduce || op.kind == CollectiveOp::Kind::kReduceScatter;
      if (reduces && op.op == ReduceOp::kAvg && !isFloating(op.type))
        return ready(
            invalidArgument("nccl " + name + " avg needs a floating-point type, got " + dataTypeName(op.type)));
      const bool p2p = op.kind == CollectiveOp::Kind::kSend || op.kind == CollectiveOp::Kind::kRecv;
      if (p2p && (op.peer < 0 || op.peer >= size_ || op.peer == rank_))
        return ready(invalidArgument("nccl " + name + ": bad peer " + std::to_string(op.peer) + " (rank " +
                                     std::to_string(rank_) + " of " + std::to_string(size_) + ")"));
      if (op.kind == CollectiveOp::Kind::kBroadcast && (op.peer < 0 || op.peer >= size_))
        return ready(invalidArgument("nccl broadcast: root " + std::to_string(op.peer) +
                                     " is outside a communicator of " + std::to_string(size_) + " ranks"));
    }
    if (ops.empty()) return ready(Status::ok());
    const std::string what = sameKind ? std::string(collectiveKindName(ops.front().kind)) + " of " +
                                            std::to_string(ops.size()) + (ops.size() == 1 ? " buffer" : " buffers")
                                      : "batch of " + std::to_string(ops.size()) + " operations";
    return issue(what, stream, [&](cudaStream_t s) -> ncclResult_t {
      ncclResult_t r = ncclGroupStart();
      if (r != ncclSuccess) return r;
      for (size_t i = 0; i < ops.size() && (r == ncclSuccess || r == ncclInProgress); ++i)
        r = enqueue(ops[i], types[i], s);
      ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess && r != ncclInProgress ? r : end;
    });
  }

  int deviceOrdinal() const override { return comm_->device(); }

  // A new NCCL communicator of the members only (ncclCommSplit would need every rank to call).
  Expected<std::shared_ptr<Communicator>> group(const std::vector<int>& ranks) override {
    std::lock_guard<std::mutex> lock(groupsMu_);
    if (auto it = groups_.find(ranks); it != groups_.end()) return it->second;
    int self = -1;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] < 0 || ranks[i] >= size_ || (i > 0 && ranks[i] <= ranks[i - 1]))
        return invalidArgument("nccl group: ranks must be ascending ranks of a communicator of " + std::to_string(size_));
      if (ranks[i] == rank_) self = static_cast<int>(i);
    }
    if (self < 0) return invalidArgument("nccl group: rank " + std::to_string(rank_) + " is not among the group's ranks");
    std::string key = key_ + "/group";
    for (int r : ranks) key += "." + std::to_string(r);
    WF_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> comm,
                        create(store_, self, static_cast<int>(ranks.size()), comm_->device(), timeout_, key));
    groups_[ranks] = comm;
    return comm;
  }

  // Breaks the communicator with `cause` (aborting NCCL) and returns the error naming dead ranks.
  Status fail(const std::string& what, const std::string& cause) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_.isOk()) return broken_;
    comm_->abort();
    broken_ = peerFailure(*store_, "nccl " + what + " (rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ")",
                          cause, timeout_);
    return broken_;
  }

  // Polls NCCL for an error of an operation in flight; ok while none.
  Status asyncError() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_.isOk()) return broken_;
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm_->get(), &state);
    if (r != ncclSuccess) return unavailable("ncclCommGetAsyncError: " + ncclText(r));
    if (state != ncclSuccess && state != ncclInProgress) return unavailable(ncclText(state));
    return Status::ok();
  }

 private:
  std::unique_ptr<Work> ready(Status s) { return std::make_unique<ReadyWork>(std::move(s)); }

  // One operation of a batch, inside its NCCL group.
  ncclResult_t enqueue(const CollectiveOp& op, ncclDataType_t t, cudaStream_t s) {
    ncclComm_t c = comm_->get();
    switch (op.kind) {
      case CollectiveOp::Kind::kAllReduce: return ncclAllReduce(op.send, op.recv, op.count, t, ncclOpOf(op.op), c, s);
      case CollectiveOp::Kind::kAllGather: return ncclAllGather(op.send, op.recv, op.count, t, c, s);
      case CollectiveOp::Kind::kReduceScatter:
        return ncclReduceScatter(op.send, op.recv, op.count, t, ncclOpOf(op.op), c, s);
      case CollectiveOp::Kind::kBroadcast: return ncclBroadcast(op.send, op.recv, op.count, t, op.peer, c, s);
      case CollectiveOp::Kind::kSend: return ncclSend(op.send, op.count, t, op.peer, c, s);
      case CollectiveOp::Kind::kRecv: return ncclRecv(op.recv, op.count, t, op.peer, c, s);
      case CollectiveOp::Kind::kAllToAll: {
        // Grouped point-to-point transfers (a nested group), as allToAll below.
        const size_t blockBytes = op.count * dataTypeBytes(op.type);
        ncclResult_t r = ncclGroupStart();
        if (r != ncclSuccess) return r;
        for (int peer = 0; peer < size_ && (r == ncclSuccess || r == ncclInProgress); ++peer) {
          const auto offset = static_cast<size_t>(peer) * blockBytes;
          r = ncclSend(static_cast<const uint8_t*>(op.send) + offset, op.count, t, peer, c, s);
          if (r == ncclSuccess || r == ncclInProgress)
            r = ncclRecv(static_cast<uint8_t*>(op.recv) + offset, op.count, t, peer, c, s);
        }
        ncclResult_t end = ncclGroupEnd();
        return r != ncclSuccess && r != ncclInProgress ? r : end;
      }
    }
    return ncclInvalidArgument;
  }

  // Enqueues `call` on the stream, waits (bounded) until NCCL has taken it, and records an event.
  template <typename Call>
  std::unique_ptr<Work> issue(const std::string& what, StreamHandle stream, Call&& call) {
    cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : stream_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!broken_.isOk())
        return ready(Status(broken_.code(), "nccl " + what + ": the communicator is broken by an earlier failure: " +
                                                broken_.message()));
      cudaError_t e = cudaSetDevice(comm_->device());
      if (e != cudaSuccess) return ready(internalError("nccl " + what + ": cudaSetDevice: " + cudaText(e)));
    }
    ncclResult_t r = call(s);
    if (r != ncclSuccess && r != ncclInProgress) return ready(fail(what, ncclText(r)));
    Status settled = settle(comm_->get(), r, Clock::now() + timeout_, "enqueueing");
    if (!settled.isOk()) return ready(fail(what, settled.message()));
    cudaEvent_t event = nullptr;
    cudaError_t e = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (e != cudaSuccess) return ready(internalError("nccl " + what + ": cudaEventCreate: " + cudaText(e)));
    e = cudaEventRecord(event, s);
    if (e != cudaSuccess) {
      cudaEventDestroy(event);
      return ready(internalError("nccl " + what + ": cudaEventRecord: " + cudaText(e)));
    }
    return std::make_unique<NcclWork>(shared_from_this(), event, what);
  }

  std::shared_ptr<TcpStore> store_;
  std::unique_ptr<NcclComm> comm_;
  cudaStream_t stream_;
  int* scratch_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::string key_;
  std::mutex mu_;
  Status broken_;
  std::mutex groupsMu_;
  std::map<std::vector<int>, std::shared_ptr<Communicator>> groups_;
};

Status NcclWork::wait() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return status_;
  const Clock::time_point deadline = Clock::now() + owner_->timeout();
  while (true) {
    cudaError_t e = cudaEventQuery(event_);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      status_ = owner_->fail(what_, "cudaEventQuery: " + cudaText(e));
      break;
    }
    Status async = owner_->asyncError();
    if (!async.isOk()) {
      status_ = owner_->fail(what_, async.message());
      break;
    }
    if (Clock::now() >= deadline) {
      status_ = owner_->fail(what_, "timed out after " + std::to_string(owner_->timeout().count() / 1000.0) + " s");
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  finished_ = true;
  return status_;
}

}  // namespace

bool ncclAvailable() { return true; }

Expected<std::shared_ptr<Communicator>> createNcclCommunicator(std::shared_ptr<TcpStore> store, int rank, int size,
                                                               int deviceOrdinal, std::chrono::milliseconds timeout,
                                                               const std::string& key) {
  return NcclCommunicator::create(std::move(store), rank, size, deviceOrdinal, timeout, key);
}

}  // namespace wf::dist
