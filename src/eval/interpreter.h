// The host evaluator: executes StableHLO functions on host Literals. One kernel per op,
// registered per op family (elementwise.cpp, reduce.cpp, dot.cpp, ...); regions (reduce
// bodies, while/if/case, sort comparators) are run by the same interpreter.
#pragma once

#include <functional>
#include <unordered_map>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/literal.h"
#include "support/status.h"

namespace wf {

class Rendezvous;  // collectives.h: where the replicas/partitions of a program meet
class GridRunner;  // collectives.h: runs interpreter.run_parallel grids

// SSA values bound to Literals; nested regions see their enclosing scope (while/if/case bodies
// may use values defined outside them).
class ValueScope {
 public:
  explicit ValueScope(const ValueScope* parent = nullptr) : parent_(parent) {}
  void bind(const Value* v, Literal l);
  const Literal* lookup(const Value* v) const;
  // Moves v's Literal out of this scope (not its parents'): an empty Literal where it is not here.
  Literal take(const Value* v);

 private:
  const ValueScope* parent_;
  std::unordered_map<const Value*, Literal> values_;
};

// Receives the outcome of `check.*` ops.
class CheckSink {
 public:
  virtual ~CheckSink() = default;
  virtual void report(const Operation& op, bool passed, const std::string& message) = 0;
  // `check.expect_serialized_eq` and friends that WarpForge cannot evaluate.
  virtual void unsupported(const Operation& op, const std::string& message) = 0;
};

struct EvalContext {
  const Module* module = nullptr;
  // Position of this process in the replica x partition grid, for collectives.
  int64_t replicaId = 0;
  int64_t partitionId = 0;
  int64_t numReplicas = 1;
  int64_t numPartitions = 1;
  Rendezvous* rendezvous = nullptr;  // null when running a single process
  GridRunner* gridRunner = nullptr;  // null: interpreter.run_parallel runs its grid on threads
  CheckSink* checks = nullptr;                 // null: check ops are errors
  const ValueScope* scope = nullptr;           // the scope of the op being run
  int callDepth = 0;
  // Called with every op result as it is computed, in every region and callee; empty: none.
  // The runtime uses it to capture values by SSA name (taps). Copying the Literal shares storage.
  std::function<void(const Value& value, const Literal& literal)> onResult;
  // Whether each transpose of a function body folds into the dot_generals reading it
  // (dotconv::transposeFoldsIntoDots), decided once where a compiled executable runs the same
  // body again and again; null, or a transpose it does not hold: decided by a scan of the block.
  const std::unordered_map<const Operation*, bool>* transposeFolds = nullptr;
};

using Kernel = std::function<Expected<std::vector<Literal>>(const Operation& op,
                                                            std::span<const Literal> operands,
                                                            EvalContext& ctx)>;

// Maps each OpCode to its CPU kernel. Family files add themselves in registerAll().
class KernelRegistry {
 public:
  static const KernelRegistry& instance();
  void add(OpCode code, Kernel kernel);
  const Kernel* find(OpCode code) const;

 private:
  std::vector<Kernel> kernels_ = std::vector<Kernel>(kNumOpCodes);
};

// One registration function per op-family file.
void registerElementwiseKernels(KernelRegistry& registry);
void registerDataMovementKernels(KernelRegistry& registry);   // reshape, transpose, slice, pad, concat, ...
void registerIndexingKernels(KernelRegistry& registry);       // gather, scatter, dynamic_slice, ...
void registerReduceKernels(KernelRegistry& registry);         // reduce, reduce_window, select_and_scatter, sort, ...
void registerDotConvKernels(KernelRegistry& registry);        // dot_general, convolution, fft, triangular_solve, ...
void registerControlFlowKernels(KernelRegistry& registry);    // while, if, case, call, map, composite, ...
void registerCollectiveKernels(KernelRegistry& registry);     // all_reduce, all_gather, ...
void registerMiscKernels(KernelRegistry& registry);           // rng, custom_call, tuple, token, infeed, ...
void registerCheckKernels(KernelRegistry& registry);          // check.* ops
void registerChloKernels(KernelRegistry& registry);           // chlo.* ops

class Interpreter {
 public:
  // Runs a func.func op on `args`; returns its results.
  static Expected<std::vector<Literal>> callFunction(const Operation& func, std::vector<Literal> args,
                                                     EvalContext& ctx);
  // Runs a single-block region with `args` bound to its block arguments; returns the operands of
  // its terminator (stablehlo.return / func.return).
  static Expected<std::vector<Literal>> runRegion(const Region& region, std::span<const Literal> args,
                                                  EvalContext& ctx);
  // Runs a function on a grid of numReplicas x numPartitions in-process "devices", one thread
  // each, for programs with collectives. Results per process, row-major over (replica, partition).
  static Expected<std::vector<std::vector<Literal>>> runGrid(const Operation& func, std::vector<Literal> args,
                                                             const Module& module, int64_t numReplicas,
                                                             int64_t numPartitions, CheckSink* checks);
};

}  // namespace wf
