// The communicator: collectives and point-to-point transfers between the ranks of a job, over an
// existing engine (Gloo for host memory, NCCL for CUDA device memory; UCC would be one more
// implementation of this interface, in one file). docs/distributed.md has the whole picture.
//
// Every operation is asynchronous: it returns a Work handle at once and completes on the
// engine's own schedule (Gloo: a worker thread of the communicator, in the order operations were
// issued; NCCL: the CUDA stream it was enqueued on). Ranks must issue the same collectives in the
// same order, as with torch.distributed. Work::wait() bounds every wait by the communicator's
// timeout: a rank that dies or stops answering makes the others fail with an error that names it,
// never hang. After a failure the communicator is broken: every later operation fails with the
// first error.
//
// Buffers are raw pointers in the communicator's memory space (host for Gloo, device for NCCL),
// so a trainer can reduce gradient buckets in place and a backend can lower StableHLO
// collectives without copies.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/status.h"

namespace wf::dist {

// Element types the engines reduce. Byte-level operations (gather, all-to-all, broadcast,
// send/recv) accept any type: pass kUInt8 and a byte count.
enum class DataType { kInt8, kUInt8, kInt32, kUInt32, kInt64, kUInt64, kFloat16, kBFloat16, kFloat32, kFloat64 };
size_t dataTypeBytes(DataType type);
const char* dataTypeName(DataType type);

// kAvg is the sum divided by the group size (floating-point types only).
enum class ReduceOp { kSum, kAvg, kProduct, kMax, kMin };
const char* reduceOpName(ReduceOp op);

// An operation in flight. wait() blocks until it completes or the communicator's timeout passes;
// it returns the operation's status (the same one on every call).
class Work {
 public:
  virtual ~Work() = default;
  virtual Status wait() = 0;
  // True once wait() would return without blocking.
  virtual bool done() = 0;
};

// One operation of a batch (Communicator::batch). `count` is in elements of `type`, as for the
// single operations: all_reduce, broadcast, send and recv: the whole buffer; all_gather: each
// rank's part (`send`); reduce_scatter: each rank's part (`recv`); all_to_all: each block.
// all_reduce and broadcast may be out of place: `recv` becomes the reduction of every rank's
// `send` (broadcast: the root's `send`); `send == recv` is in place. send reads `send`, recv
// writes `recv`; the other fields are unused.
struct CollectiveOp {
  enum class Kind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll, kSend, kRecv };
  Kind kind = Kind::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DataType type = DataType::kUInt8;
  ReduceOp op = ReduceOp::kSum;  // all_reduce, reduce_scatter
  int peer = 0;                  // broadcast: the root; send, recv: the other rank
};
const char* collectiveKindName(CollectiveOp::Kind kind);

// A device stream for device communicators (a cudaStream_t for NCCL): the operation is ordered
// after the work already on it, and later work on it runs after the operation. Null: the
// communicator's own stream. Host communicators ignore it.
using StreamHandle = void*;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "gloo", "nccl".
  virtual std::string backend() const = 0;
  // The bound on every wait of every operation.
  virtual std::chrono::milliseconds timeout() const = 0;

  // In place: `data` (count elements) becomes the reduction over every rank's `data`.
  virtual std::unique_ptr<Work> allReduce(void* data, size_t count, DataType type, ReduceOp op,
                                          StreamHandle stream = nullptr) = 0;
  // `recv` (size() * count elements) becomes every rank's `send` (count elements), in rank order.
  virtual std::unique_ptr<Work> allGather(const void* send, void* recv, size_t count, DataType type,
                                          StreamHandle stream = nullptr) = 0;
  // `send` holds size() blocks of `count` elements; `recv` (count elements) becomes the
  // reduction over every rank of its block number rank().
  virtual std::unique_ptr<Work> reduceScatter(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                                              StreamHandle stream = nullptr) = 0;
  // In place: `data` becomes rank `root`'s `data`.
  virtual std::unique_ptr<Work> broadcast(void* data, size_t count, DataType type, int root,
                                          StreamHandle stream = nullptr) = 0;
  // `send` and `recv` hold size() blocks of `count` elements: block j of `send` goes to rank j,
  // block i of `recv` comes from rank i.
  virtual std::unique_ptr<Work> allToAll(const void* send, void* recv, size_t count, DataType type,
                                         StreamHandle stream = nullptr) = 0;
  virtual std::unique_ptr<Work> barrier(StreamHandle stream = nullptr) = 0;
  // Point to point: messages between two ranks with the same tag arrive in the order sent. A
  // send completes once the message is on its way or delivered, so a rank may post its sends
  // before its receives without deadlock.
  virtual std::unique_ptr<Work> send(const void* data, size_t count, DataType type, int peer, uint32_t tag = 0,
                                     StreamHandle stream = nullptr) = 0;
  virtual std::unique_ptr<Work> recv(void* data, size_t count, DataType type, int peer, uint32_t tag = 0,
                                     StreamHandle stream = nullptr) = 0;

  // Several operations issued as one, completing together: NCCL runs them as one group
  // (ncclGroupStart/End: one launch for the gradients of a bucket, and the only way for a rank to
  // both send and receive on one stream without deadlock). The default issues them one by one,
  // in order, on this communicator's own operations, copying with memcpy where all_reduce or
  // broadcast is out of place: right for host-memory communicators, which is why device
  // communicators override it. Every rank issues the same collectives in the same order.
  virtual std::unique_ptr<Work> batch(const std::vector<CollectiveOp>& ops, StreamHandle stream = nullptr);

  // The CUDA device of a device communicator (its buffers live there); -1 for host memory.
  virtual int deviceOrdinal() const { return -1; }

  // The communicator of the ranks `ranks` (ranks of this communicator, ascending, this rank among
  // them); its rank() is this rank's index in `ranks`. Only the members call it, in the same
  // order as their other operations; the same `ranks` give the same communicator (created once).
  virtual Expected<std::shared_ptr<Communicator>> group(const std::vector<int>& ranks) = 0;

  // Synchronous forms: issue and wait.
  Status allReduceSync(void* data, size_t count, DataType type, ReduceOp op) {
    return allReduce(data, count, type, op)->wait();
  }
  Status barrierSync() { return barrier()->wait(); }
};

}  // namespace wf::dist
