// Names of the communicator's enums (communicator.h).
#include "dist/communicator.h"

#include <cstring>
#include <thread>

#include "dist/failure.h"

namespace wf::dist {

size_t dataTypeBytes(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUInt8: return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFloat64: return 8;
  }
  return 1;
}

const char* dataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUInt32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUInt64: return "uint64";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
  }
  return "?";
}

const char* reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAvg: return "avg";
    case ReduceOp::kProduct: return "product";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

const char* collectiveKindName(CollectiveOp::Kind kind) {
  switch (kind) {
    case CollectiveOp::Kind::kAllReduce: return "all_reduce";
    case CollectiveOp::Kind::kAllGather: return "all_gather";
    case CollectiveOp::Kind::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::Kind::kBroadcast: return "broadcast";
    case CollectiveOp::Kind::kAllToAll: return "all_to_all";
    case CollectiveOp::Kind::kSend: return "send";
    case CollectiveOp::Kind::kRecv: return "recv";
  }
  return "?";
}

namespace {

// The operations of a batch issued one by one: done when all are, its status the first error.
class BatchWork final : public Work {
 public:
  explicit BatchWork(std::vector<std::unique_ptr<Work>> works) : works_(std::move(works)) {}
  Status wait() override {
    Status first;
    for (auto& w : works_) {
      Status s = w->wait();
      if (first.isOk() && !s.isOk()) first = s;
    }
    return first;
  }
  bool done() override {
    for (auto& w : works_)
      if (!w->done()) return false;
    return true;
  }

 private:
  std::vector<std::unique_ptr<Work>> works_;
};

}  // namespace

std::unique_ptr<Work> Communicator::batch(const std::vector<CollectiveOp>& ops, StreamHandle stream) {
  std::vector<std::unique_ptr<Work>> works;
  for (const CollectiveOp& op : ops) {
    const size_t bytes = op.count * dataTypeBytes(op.type);
    switch (op.kind) {
      case CollectiveOp::Kind::kAllReduce:
        if (op.send != op.recv && bytes > 0) std::memcpy(op.recv, op.send, bytes);
        works.push_back(allReduce(op.recv, op.count, op.type, op.op, stream));
        break;
      case CollectiveOp::Kind::kBroadcast:
        if (op.send != op.recv && bytes > 0 && rank() == op.peer) std::memcpy(op.recv, op.send, bytes);
        works.push_back(broadcast(op.recv, op.count, op.type, op.peer, stream));
        break;
      case CollectiveOp::Kind::kAllGather:
        works.push_back(allGather(op.send, op.recv, op.count, op.type, stream));
        break;
      case CollectiveOp::Kind::kReduceScatter:
        works.push_back(reduceScatter(op.send, op.recv, op.count, op.type, op.op, stream));
        break;
      case CollectiveOp::Kind::kAllToAll:
        works.push_back(allToAll(op.send, op.recv, op.count, op.type, stream));
        break;
      case CollectiveOp::Kind::kSend:
        works.push_back(send(op.send, op.count, op.type, op.peer, 0, stream));
        break;
      case CollectiveOp::Kind::kRecv:
        works.push_back(recv(op.recv, op.count, op.type, op.peer, 0, stream));
        break;
    }
  }
  return std::make_unique<BatchWork>(std::move(works));
}

Status peerFailure(TcpStore& store, const std::string& operation, const std::string& cause,
                   std::chrono::milliseconds timeout) {
  // The peers see a closed connection at once; the store's server may see the same death a few
  // milliseconds later, so give it a moment before concluding that nobody died.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (true) {
    Expected<std::vector<int>> dead = store.deadRanks();
    if (!dead)
      return unavailable(operation + " failed: " + cause + "; and " + dead.status().message());
    if (!dead->empty()) {
      // The first rank to leave is the cause; the others usually failed because of it.
      std::string later;
      for (size_t i = 1; i < dead->size(); ++i) later += (i > 1 ? ", " : "") + std::to_string((*dead)[i]);
      return unavailable(operation + " failed: rank " + std::to_string((*dead)[0]) +
                         " has left the job (connection to the job's store closed" +
                         (later.empty() ? std::string() : "; then rank " + later) + "): " + cause);
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return unavailable(operation + " failed: " + cause + " (no rank has left the job: one may be stuck, or slower than the " +
                     std::to_string(timeout.count() / 1000.0) + " s timeout)");
}

}  // namespace wf::dist
