// CUDA kernels for stablehlo.scatter in the general form of the spec (update window dims,
// inserted window dims, input/indices batching dims, any index vector dim), like the CPU
// backend's scatter (src/eval/indexing.cpp): the result starts as a copy of the input,
// one thread per update element computes its place in the result, and update elements that
// land outside the input are skipped (the CPU kernel clips each window the same way).
//
// Update computations: assignment (`return %update...`, any number of inputs), and for one input
// add, multiply, maximum and minimum of (current, update). Where indices may collide (no
// unique_indices) the combiners are atomic: native atomicAdd for f32, f64, f16, bf16 and 32/64-bit
// integers, atomicMax/atomicMin for 32/64-bit integers, compare-and-swap loops for the rest
// (8/16-bit elements through their aligned 32-bit word). Colliding float additions therefore
// sum in an unspecified order. Colliding assignments are deterministic: as on the CPU, the last
// update in index order wins (each result element records the largest index position that
// targets it, in workspace, then that position writes). Other bodies are unimplemented.
// select_and_scatter (the max-pool gradient) is here too, without atomics (see its section).
#include <algorithm>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct ScatterParams {
  int updRank = 0;
  int64_t updDims[kMaxRank] = {};
  // Per update dim: the operand dim a window dim walks (-1 for a scatter dim); for a scatter dim,
  // its stride in the indices tensor and in the row-major batch shape.
  int windowOperandDim[kMaxRank] = {};
  int64_t indicesStride[kMaxRank] = {};
  int64_t batchStride[kMaxRank] = {};
  int rank = 0;  // of the operand
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int numIndices = 0;
  int indexOperandDim[kMaxRank] = {};  // scatter_dims_to_operand_dims
  int64_t indexVectorStride = 0;       // stride of the index vector dim in the indices tensor
  int numBatching = 0;
  int batchingOperandDim[kMaxRank] = {};
  int batchingUpdateDim[kMaxRank] = {};
  IndexType indexType = IndexType::kS64;
  int indexBytes = 8;
  int64_t n = 0;  // update elements
};

// The result offset of update element u (-1 if it lands outside) and its batch position.
__device__ int64_t scatterTarget(const ScatterParams& p, const char* __restrict__ indices, int64_t u, int64_t& batch) {
  int64_t c[kMaxRank];
  int64_t rem = u;
  for (int r = p.updRank - 1; r >= 0; --r) {
    c[r] = rem % p.updDims[r];
    rem /= p.updDims[r];
  }
  int64_t full[kMaxRank];
  for (int d = 0; d < p.rank; ++d) full[d] = 0;
  int64_t idxOff = 0;
  batch = 0;
  for (int r = 0; r < p.updRank; ++r) {
    if (p.windowOperandDim[r] >= 0) {
      full[p.windowOperandDim[r]] += c[r];
    } else {
      idxOff += c[r] * p.indicesStride[r];
      batch += c[r] * p.batchStride[r];
    }
  }
  for (int k = 0; k < p.numIndices; ++k)
    full[p.indexOperandDim[k]] += loadIndex(indices + (idxOff + k * p.indexVectorStride) * p.indexBytes, p.indexType);
  for (int k = 0; k < p.numBatching; ++k) full[p.batchingOperandDim[k]] += c[p.batchingUpdateDim[k]];
  int64_t off = 0;
  for (int d = 0; d < p.rank; ++d) {
    if (full[d] < 0 || full[d] >= p.dims[d]) return -1;
    off += full[d] * p.strides[d];
  }
  return off;
}

// ---- assignment ----

struct alignas(16) Word16 {
  uint64_t lo, hi;
};

__global__ void scatterWinnerKernel(const char* __restrict__ indices, int32_t* __restrict__ winner, ScatterParams p) {
  WF_GRID_STRIDE_LOOP(u, p.n) {
    int64_t batch;
    const int64_t off = scatterTarget(p, indices, u, batch);
    if (off >= 0) atomicMax(winner + off, static_cast<int32_t>(batch));
  }
}

// winner: null when indices are unique (every update element writes).
template <typename W>
__global__ void scatterAssignKernel(W* __restrict__ out, const W* __restrict__ upd, const char* __restrict__ indices,
                                    const int32_t* __restrict__ winner, ScatterParams p) {
  WF_GRID_STRIDE_LOOP(u, p.n) {
    int64_t batch;
    const int64_t off = scatterTarget(p, indices, u, batch);
    if (off < 0) continue;
    if (winner && winner[off] != static_cast<int32_t>(batch)) continue;
    out[off] = upd[u];
  }
}

template <typename W>
Status launchAssign(cudaStream_t stream, void* out, const void* upd, const void* indices, const int32_t* winner,
                    const ScatterParams& p) {
  scatterAssignKernel<W><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<W*>(out), static_cast<const W*>(upd),
                                                                static_cast<const char*>(indices), winner, p);
  WF_CUDA_CHECK_LAUNCH("scatterAssignKernel");
  return Status::ok();
}

Status assign(int bytes, cudaStream_t stream, void* out, const void* upd, const void* indices, const int32_t* winner,
              const ScatterParams& p) {
  switch (bytes) {
    case 1: return launchAssign<uint8_t>(stream, out, upd, indices, winner, p);
    case 2: return launchAssign<uint16_t>(stream, out, upd, indices, winner, p);
    case 4: return launchAssign<uint32_t>(stream, out, upd, indices, winner, p);
    case 8: return launchAssign<uint64_t>(stream, out, upd, indices, winner, p);
    case 16: return launchAssign<Word16>(stream, out, upd, indices, winner, p);
    default: return internalError("scatter of " + std::to_string(bytes) + "-byte elements");
  }
}

// ---- combiners ----

enum class Comb : uint8_t { kAdd, kMul, kMax, kMin };

template <typename Tr>
__device__ typename Tr::C combineValues(Comb k, typename Tr::C a, typename Tr::C b) {
  using C = typename Tr::C;
  if constexpr (Tr::kCat == Cat::kBool) {
    return (k == Comb::kAdd || k == Comb::kMax) ? (a || b) : (a && b);
  } else if constexpr (Tr::kCat == Cat::kFloat) {
    switch (k) {
      case Comb::kAdd: return a + b;
      case Comb::kMul: return a * b;
      case Comb::kMax: return em::Max::apply(a, b);
      case Comb::kMin: return em::Min::apply(a, b);
    }
    return a;
  } else {
    switch (k) {
      case Comb::kAdd: return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      case Comb::kMul: return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      case Comb::kMax: return a > b ? a : b;
      case Comb::kMin: return a < b ? a : b;
    }
    return a;
  }
}

template <typename Tr>
__device__ typename Tr::S combineStored(Comb k, typename Tr::S cur, typename Tr::S upd) {
  return Tr::store(combineValues<Tr>(k, Tr::load(cur), Tr::load(upd)));
}

// A compare-and-swap loop on the element, for any combiner.
template <typename Tr>
__device__ void atomicCombineCas(typename Tr::S* addr, typename Tr::S upd, Comb k) {
  using S = typename Tr::S;
  if constexpr (sizeof(S) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, 8);
      const S next = combineStored<Tr>(k, cur, upd);
      unsigned long long nw;
      memcpy(&nw, &next, 8);
      if (nw == assumed) break;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  } else if constexpr (sizeof(S) == 4) {
    auto* w = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, 4);
      const S next = combineStored<Tr>(k, cur, upd);
      unsigned int nw;
      memcpy(&nw, &next, 4);
      if (nw == assumed) break;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  } else {
    // 1- and 2-byte elements: CAS on the aligned 32-bit word that holds them (device allocations
    // are at least 256-byte aligned and padded, so the word is inside the buffer).
    const auto a = reinterpret_cast<uintptr_t>(addr);
    auto* w = reinterpret_cast<unsigned int*>(a & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(a & 3) * 8;
    const unsigned mask = ((1u << (8 * sizeof(S))) - 1u) << shift;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const auto cur = static_cast<S>((assumed & mask) >> shift);
      const S next = combineStored<Tr>(k, cur, upd);
      const unsigned nw = (assumed & ~mask) | ((static_cast<unsigned>(next) << shift) & mask);
      if (nw == assumed) break;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  }
}

template <typename Tr>
__device__ void atomicCombine(typename Tr::S* addr, typename Tr::S upd, Comb k) {
  using S = typename Tr::S;
  if constexpr (std::is_same_v<Tr, NativeFloatT<float>> || std::is_same_v<Tr, NativeFloatT<double>>) {
    if (k == Comb::kAdd) {
      atomicAdd(addr, upd);
      return;
    }
  } else if constexpr (std::is_same_v<Tr, F16T>) {
    if (k == Comb::kAdd) {
      atomicAdd(reinterpret_cast<__half*>(addr), __ushort_as_half(upd));
      return;
    }
  } else if constexpr (std::is_same_v<Tr, BF16T>) {
    if (k == Comb::kAdd) {
      atomicAdd(reinterpret_cast<__nv_bfloat16*>(addr), __ushort_as_bfloat16(upd));
      return;
    }
  } else if constexpr ((Tr::kCat == Cat::kSInt || Tr::kCat == Cat::kUInt) && sizeof(S) == 4) {
    if (k == Comb::kAdd) {
      atomicAdd(reinterpret_cast<unsigned int*>(addr), static_cast<unsigned int>(upd));
      return;
    }
    if (k == Comb::kMax || k == Comb::kMin) {
      if constexpr (Tr::kCat == Cat::kSInt) {
        if (k == Comb::kMax) atomicMax(reinterpret_cast<int*>(addr), static_cast<int>(upd));
        else atomicMin(reinterpret_cast<int*>(addr), static_cast<int>(upd));
      } else {
        if (k == Comb::kMax) atomicMax(reinterpret_cast<unsigned int*>(addr), static_cast<unsigned int>(upd));
        else atomicMin(reinterpret_cast<unsigned int*>(addr), static_cast<unsigned int>(upd));
      }
      return;
    }
  } else if constexpr ((Tr::kCat == Cat::kSInt || Tr::kCat == Cat::kUInt) && sizeof(S) == 8) {
    if (k == Comb::kAdd) {
      atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(upd));
      return;
    }
    if (k == Comb::kMax || k == Comb::kMin) {
      if constexpr (Tr::kCat == Cat::kSInt) {
        if (k == Comb::kMax) atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(upd));
        else atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(upd));
      } else {
        if (k == Comb::kMax) atomicMax(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(upd));
        else atomicMin(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(upd));
      }
      return;
    }
  }
  atomicCombineCas<Tr>(addr, upd, k);
}

template <typename Tr>
__global__ void scatterCombineKernel(typename Tr::S* __restrict__ out, const typename Tr::S* __restrict__ upd,
                                     const char* __restrict__ indices, ScatterParams p, Comb k, bool atomic) {
  WF_GRID_STRIDE_LOOP(u, p.n) {
    int64_t batch;
    const int64_t off = scatterTarget(p, indices, u, batch);
    if (off < 0) continue;
    if (atomic) atomicCombine<Tr>(out + off, upd[u], k);
    else out[off] = combineStored<Tr>(k, out[off], upd[u]);
  }
}

// ---- lowering ----

using Results = Expected<std::unique_ptr<OpKernel>>;

enum class Body : uint8_t { kAssign, kCombine, kOther };

// Assignment (`return %update...`) or, for one input, `return op(%current, %update)`.
Body classifyBody(const Operation& op, size_t n, Comb& comb) {
  if (op.numRegions() != 1 || op.region(0).empty()) return Body::kOther;
  const Block& b = op.region(0).front();
  if (b.numArguments() != 2 * n) return Body::kOther;
  for (size_t i = 0; i < n; ++i)
    if (b.argument(i)->type() != Type::tensor({}, op.operand(i)->type().elementType()) ||
        b.argument(n + i)->type() != b.argument(i)->type())
      return Body::kOther;
  const Operation* ret = b.terminator();
  if (!ret || (ret->code() != OpCode::Return && ret->code() != OpCode::FuncReturn) || ret->numOperands() != n)
    return Body::kOther;
  const auto& ops = b.operations();
  if (ops.size() == 1) {
    for (size_t i = 0; i < n; ++i)
      if (ret->operand(i) != b.argument(n + i)) return Body::kOther;
    return Body::kAssign;
  }
  if (n != 1 || ops.size() != 2) return Body::kOther;
  const Operation& f = *ops[0];
  if (f.numOperands() != 2 || f.numResults() != 1 || ret->operand(0) != f.result(0) ||
      f.result(0)->type() != b.argument(0)->type())
    return Body::kOther;
  const Value* x = f.operand(0);
  const Value* y = f.operand(1);
  if (!((x == b.argument(0) && y == b.argument(1)) || (x == b.argument(1) && y == b.argument(0)))) return Body::kOther;
  switch (f.code()) {
    case OpCode::Add: comb = Comb::kAdd; return Body::kCombine;
    case OpCode::Multiply: comb = Comb::kMul; return Body::kCombine;
    case OpCode::Maximum: comb = Comb::kMax; return Body::kCombine;
    case OpCode::Minimum: comb = Comb::kMin; return Body::kCombine;
    default: return Body::kOther;
  }
}

Results lowerScatter(const Operation& op, LowerContext& ctx) {
  if (op.numOperands() < 3 || op.numOperands() % 2 == 0 || op.numResults() != (op.numOperands() - 1) / 2)
    return invalidArgument(op.describe() + ": expects N inputs, indices and N updates");
  const size_t n = (op.numOperands() - 1) / 2;
  Comb comb = Comb::kAdd;
  const Body body = classifyBody(op, n, comb);
  if (body == Body::kOther)
    return unsupportedOnCuda(op, "no CUDA kernel for this scatter update computation (assignment, or add, multiply, "
                                 "maximum, minimum of one input)");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> sShape, staticShape(op, op.operand(n)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> updShape, staticShape(op, op.operand(n + 1)->type()));
  for (size_t i = 0; i < n; ++i) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> a, staticShape(op, op.operand(i)->type()));
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> u, staticShape(op, op.operand(n + 1 + i)->type()));
    if (a != inShape || u != updShape)
      return invalidArgument(op.describe() + ": all inputs (and all updates) must have the same shape");
    const ElementType t = op.operand(i)->type().elementType();
    if (t == ElementType::kQuantized || op.operand(n + 1 + i)->type().elementType() != t ||
        op.result(i)->type().elementType() != t)
      return unsupportedOnCuda(op, "no CUDA kernel for scatter of " + std::string(elementTypeName(t)));
  }
  if (inShape.size() > static_cast<size_t>(kMaxRank) || sShape.size() > static_cast<size_t>(kMaxRank) ||
      updShape.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "scatter of rank over the CUDA kernels' limit");
  const Attribute* dn = op.attr("scatter_dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing scatter_dimension_numbers");
  auto list = [&](const char* name) -> std::vector<int64_t> {
    const Attribute* f = dn->field(name);
    if (!f) return {};
    auto v = f->asIntList();
    return v ? *v : std::vector<int64_t>{};
  };
  const std::vector<int64_t> updateWindowDims = list("update_window_dims"), inserted = list("inserted_window_dims"),
                             inputBatching = list("input_batching_dims"),
                             indicesBatching = list("scatter_indices_batching_dims"),
                             toOperand = list("scatter_dims_to_operand_dims");
  const Attribute* ivdAttr = dn->field("index_vector_dim");
  // An absent index_vector_dim is 0 (the attribute's default), as on the CPU backend.
  const int64_t ivd = ivdAttr && ivdAttr->asInt() ? *ivdAttr->asInt() : 0;
  const auto rank = static_cast<int64_t>(inShape.size());
  auto inRange = [](const std::vector<int64_t>& v, int64_t r) {
    return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < r; });
  };
  if (ivd < 0 || ivd > static_cast<int64_t>(sShape.size()) || !inRange(inserted, rank) ||
      !inRange(inputBatching, rank) || !inRange(toOperand, rank) ||
      !inRange(updateWindowDims, static_cast<int64_t>(updShape.size())) ||
      !inRange(indicesBatching, static_cast<int64_t>(sShape.size())) || inputBatching.size() != indicesBatching.size())
    return invalidArgument(op.describe() + ": inconsistent scatter dimension numbers");
  const int64_t vectorSize = ivd < static_cast<int64_t>(sShape.size()) ? sShape[static_cast<size_t>(ivd)] : 1;
  if (static_cast<int64_t>(toOperand.size()) != vectorSize)
    return invalidArgument(op.describe() + ": scatter_dims_to_operand_dims does not match the index vector size");

  auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<int64_t> windowDims, updateScatterDims, indicesBatchDims;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(inserted, d) && !contains(inputBatching, d)) windowDims.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(updShape.size()); ++d)
    if (!contains(updateWindowDims, d)) updateScatterDims.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(sShape.size()); ++d)
    if (d != ivd) indicesBatchDims.push_back(d);
  if (windowDims.size() != updateWindowDims.size() || updateScatterDims.size() != indicesBatchDims.size())
    return invalidArgument(op.describe() + ": updates do not match the scatter dimension numbers");

  ScatterParams p;
  p.updRank = static_cast<int>(updShape.size());
  p.rank = static_cast<int>(rank);
  p.n = numElementsOf(updShape);
  const std::vector<int64_t> inStrides = rowMajorStridesOf(inShape), sStrides = rowMajorStridesOf(sShape);
  for (int64_t d = 0; d < rank; ++d) {
    p.dims[d] = inShape[static_cast<size_t>(d)];
    p.strides[d] = inStrides[static_cast<size_t>(d)];
  }
  for (int r = 0; r < p.updRank; ++r) {
    p.updDims[r] = updShape[static_cast<size_t>(r)];
    p.windowOperandDim[r] = -1;
  }
  for (size_t k = 0; k < updateWindowDims.size(); ++k) {
    const auto r = static_cast<size_t>(updateWindowDims[k]);
    if (updShape[r] > inShape[static_cast<size_t>(windowDims[k])])
      return invalidArgument(op.describe() + ": update window exceeds the input");
    p.windowOperandDim[r] = static_cast<int>(windowDims[k]);
  }
  int64_t batchCount = 1;
  for (size_t k = updateScatterDims.size(); k-- > 0;) {
    const auto r = static_cast<size_t>(updateScatterDims[k]);
    const auto sd = static_cast<size_t>(indicesBatchDims[k]);
    if (updShape[r] != sShape[sd]) return invalidArgument(op.describe() + ": updates do not match the scatter indices");
    p.indicesStride[r] = sStrides[sd];
    p.batchStride[r] = batchCount;
    batchCount *= updShape[r];
  }
  p.numIndices = static_cast<int>(toOperand.size());
  for (size_t k = 0; k < toOperand.size(); ++k) p.indexOperandDim[k] = static_cast<int>(toOperand[k]);
  p.indexVectorStride = ivd < static_cast<int64_t>(sShape.size()) ? sStrides[static_cast<size_t>(ivd)] : 0;
  p.numBatching = static_cast<int>(inputBatching.size());
  for (size_t k = 0; k < inputBatching.size(); ++k) {
    const auto it = std::find(indicesBatchDims.begin(), indicesBatchDims.end(), indicesBatching[k]);
    if (it == indicesBatchDims.end())
      return invalidArgument(op.describe() + ": scatter_indices_batching_dims names the index vector dim");
    p.batchingOperandDim[k] = static_cast<int>(inputBatching[k]);
    p.batchingUpdateDim[k] = static_cast<int>(updateScatterDims[static_cast<size_t>(it - indicesBatchDims.begin())]);
  }
  const ElementType st = op.operand(n)->type().elementType();
  p.indexBytes = storageBytes(st);
  if (!indexTypeFor(st, &p.indexType))
    return unsupportedOnCuda(op, "no CUDA kernel for scatter indices of type " + std::string(elementTypeName(st)));
  const Attribute* uniqueAttr = op.attr("unique_indices");
  const bool unique = uniqueAttr && uniqueAttr->boolValue();
  const int64_t inElems = numElementsOf(inShape);
  std::vector<size_t> copyBytes;
  std::vector<int> elemBytes;
  for (size_t i = 0; i < n; ++i) {
    elemBytes.push_back(storageBytes(op.operand(i)->type().elementType()));
    copyBytes.push_back(static_cast<size_t>(inElems) * static_cast<size_t>(elemBytes.back()));
  }
  auto copyInputs = [n, copyBytes](const LaunchContext& lc, std::span<void* const> in,
                                   std::span<void* const> out) -> Status {
    for (size_t i = 0; i < n; ++i)
      if (copyBytes[i] > 0 && out[i] != in[i])
        WF_CUDA_CHECK(cudaMemcpyAsync(out[i], in[i], copyBytes[i], cudaMemcpyDeviceToDevice, lc.stream));
    return Status::ok();
  };

  if (body == Body::kAssign) {
    // Colliding assignments: the last update in index order wins, through a winner table.
    const bool needWinner = !unique && p.n > 0;
    if (needWinner && batchCount > INT32_MAX)
      return unsupportedOnCuda(op, "no CUDA kernel for over 2^31 scatter indices without unique_indices");
    const size_t winnerBytes = needWinner ? static_cast<size_t>(inElems) * sizeof(int32_t) : 0;
    ctx.workspaceBytes = std::max(ctx.workspaceBytes, winnerBytes);
    return makeKernel([p, n, elemBytes, winnerBytes, needWinner, copyInputs](
                          const LaunchContext& lc, std::span<void* const> in, std::span<void* const> out) -> Status {
      WF_RETURN_IF_ERROR(copyInputs(lc, in, out));
      // An empty input: every update lands outside.
      if (p.n == 0 || out[0] == nullptr) return Status::ok();
      int32_t* winner = nullptr;
      if (needWinner) {
        if (!lc.workspace || lc.workspaceBytes < winnerBytes) return internalError("scatter: workspace too small");
        winner = static_cast<int32_t*>(lc.workspace);
        WF_CUDA_CHECK(cudaMemsetAsync(winner, 0xFF, winnerBytes, lc.stream));  // -1 everywhere
        scatterWinnerKernel<<<gridFor(p.n), kThreads, 0, lc.stream>>>(static_cast<const char*>(in[n]), winner, p);
        WF_CUDA_CHECK_LAUNCH("scatterWinnerKernel");
      }
      for (size_t i = 0; i < n; ++i)
        WF_RETURN_IF_ERROR(assign(elemBytes[i], lc.stream, out[i], in[n + 1 + i], in[n], winner, p));
      return Status::ok();
    });
  }

  const ElementType et = op.operand(0)->type().elementType();
  return dispatchType(
      et, Results(unsupportedOnCuda(op, "no CUDA kernel for scatter of " + std::string(elementTypeName(et)))),
      [&](auto tag) -> Results {
        using Tr = decltype(tag);
        return makeKernel([p, comb, unique, copyInputs](const LaunchContext& lc, std::span<void* const> in,
                                                        std::span<void* const> out) -> Status {
          WF_RETURN_IF_ERROR(copyInputs(lc, in, out));
          if (p.n == 0 || out[0] == nullptr) return Status::ok();
          using S = typename Tr::S;
          scatterCombineKernel<Tr><<<gridFor(p.n), kThreads, 0, lc.stream>>>(
              static_cast<S*>(out[0]), static_cast<const S*>(in[2]), static_cast<const char*>(in[1]), p, comb, !unique);
          WF_CUDA_CHECK_LAUNCH("scatterCombineKernel");
          return Status::ok();
        });
      });
}

// ---- select_and_scatter -----------------------------------------------------------------------
//
// The max-pool gradient: each source element selects one element of its window of the operand
// (a single compare GE/GT/LE/LT of the select region's arguments, FLOAT or integer: the first
// element in row-major window order that no later one displaces, padding skipped, as on the CPU)
// and combines into the result there with the scatter region's single add/multiply/max/min.
// Two kernels, no atomics, so the result is the same on every run: the first writes each
// window's chosen offset to the workspace; the second gives each result element the init value
// combined with the sources of the windows that chose it, in row-major source order (the
// CPU's order, so an f32 sum matches it bit for bit). Windows overlap, so an element has a few
// candidates (four for a 3x3 window of stride 2), each a load of the chosen offset.

enum class SelDir : uint8_t { kGE, kGT, kLE, kLT };

struct WindowScatterParams {
  int rank = 0;
  int64_t inDims[kMaxRank] = {};
  int64_t inStrides[kMaxRank] = {};
  int64_t srcDims[kMaxRank] = {};
  int64_t window[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t padLo[kMaxRank] = {};
  int64_t windowSize = 1;
  int64_t nSource = 0;
  int64_t nOut = 0;
};

template <typename Tr>
__device__ inline bool keepSelected(SelDir d, typename Tr::C best, typename Tr::C v) {
  switch (d) {
    case SelDir::kGE: return best >= v;
    case SelDir::kGT: return best > v;
    case SelDir::kLE: return best <= v;
    case SelDir::kLT: return best < v;
  }
  return true;
}

// chosen[s]: the operand offset window s selects, or -1 (a window of padding only). Index math
// in I (32-bit where the operand's offsets fit); the window is walked by an odometer, not by
// dividing each position.
template <typename Tr, typename I>
__global__ void selectInWindowsKernel(const typename Tr::S* __restrict__ operand, I* __restrict__ chosenOut,
                                      WindowScatterParams p, SelDir dir) {
  const I nSource = static_cast<I>(p.nSource);
  for (I s = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; s < nSource; s += static_cast<I>(blockDim.x) * gridDim.x) {
    I first[kMaxRank], w[kMaxRank];
    I rem = s, base = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const I srcDim = static_cast<I>(p.srcDims[d]);
      first[d] = rem % srcDim * static_cast<I>(p.strides[d]) - static_cast<I>(p.padLo[d]);
      rem /= srcDim;
      w[d] = 0;
      base += first[d] * static_cast<I>(p.inStrides[d]);
    }
    I chosen = -1;
    typename Tr::C best{};
    for (;;) {
      bool inside = true;
      I off = base;
      for (int d = 0; d < p.rank; ++d) {
        const I x = first[d] + w[d];
        inside = inside && x >= 0 && x < static_cast<I>(p.inDims[d]);
        off += w[d] * static_cast<I>(p.inStrides[d]);
      }
      if (inside) {
        const auto v = Tr::load(operand[off]);
        if (chosen < 0 || !keepSelected<Tr>(dir, best, v)) {
          chosen = off;
          best = v;
        }
      }
      int d = p.rank - 1;  // the next window position, row-major
      while (d >= 0 && w[d] == static_cast<I>(p.window[d]) - 1) w[d--] = 0;
      if (d < 0) break;
      ++w[d];
    }
    chosenOut[s] = chosen;
  }
}

// Pooling over the last two dims (every other dim's window 1, stride 1, no padding: a max-pool
// gradient): the same two kernels over planes of H x W with the coordinates in scalars. The
// generic kernels keep per-dim coordinates in arrays indexed at run time, which live in local
// memory; these keep them in registers.
struct PoolScatterParams {
  int32_t h = 0, w = 0, oh = 0, ow = 0;  // the operand's and the source's last two dims
  int32_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t nSource = 0, nOut = 0;
};

// The pooling form of `p`, or false.
bool poolForm(const WindowScatterParams& p, PoolScatterParams* q) {
  if (p.rank < 2 || p.nOut > INT32_MAX || p.nSource > INT32_MAX) return false;
  for (int d = 0; d + 2 < p.rank; ++d)
    if (p.window[d] != 1 || p.strides[d] != 1 || p.padLo[d] != 0 || p.srcDims[d] != p.inDims[d]) return false;
  const int a = p.rank - 2, b = p.rank - 1;
  q->h = static_cast<int32_t>(p.inDims[a]);
  q->w = static_cast<int32_t>(p.inDims[b]);
  q->oh = static_cast<int32_t>(p.srcDims[a]);
  q->ow = static_cast<int32_t>(p.srcDims[b]);
  q->kh = static_cast<int32_t>(p.window[a]);
  q->kw = static_cast<int32_t>(p.window[b]);
  q->sh = static_cast<int32_t>(p.strides[a]);
  q->sw = static_cast<int32_t>(p.strides[b]);
  q->ph = static_cast<int32_t>(p.padLo[a]);
  q->pw = static_cast<int32_t>(p.padLo[b]);
  q->nSource = p.nSource;
  q->nOut = p.nOut;
  return true;
}

template <typename Tr>
__global__ void selectInPoolWindowsKernel(const typename Tr::S* __restrict__ operand, int32_t* __restrict__ chosenOut,
                                          PoolScatterParams p, SelDir dir) {
  const int32_t n = static_cast<int32_t>(p.nSource);
  for (int32_t s = static_cast<int32_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < n; s += blockDim.x * gridDim.x) {
    const int32_t ox = s % p.ow, t = s / p.ow, oy = t % p.oh, plane = t / p.oh;
    const int32_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw, base = plane * p.h * p.w;
    int32_t chosen = -1;
    typename Tr::C best{};
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int32_t y = y0 + ky;
      if (y < 0 || y >= p.h) continue;
      for (int32_t kx = 0; kx < p.kw; ++kx) {
        const int32_t x = x0 + kx;
        if (x < 0 || x >= p.w) continue;
        const int32_t off = base + y * p.w + x;
        const auto v = Tr::load(operand[off]);
        if (chosen < 0 || !keepSelected<Tr>(dir, best, v)) {
          chosen = off;
          best = v;
        }
      }
    }
    chosenOut[s] = chosen;
  }
}

template <typename Tr>
__global__ void gatherPoolSelectedKernel(const int32_t* __restrict__ chosen, const typename Tr::S* __restrict__ source,
                                         const typename Tr::S* __restrict__ init, typename Tr::S* __restrict__ out,
                                         PoolScatterParams p, Comb comb) {
  const int32_t n = static_cast<int32_t>(p.nOut);
  for (int32_t i = static_cast<int32_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const int32_t x = i % p.w + p.pw, t = i / p.w, y = t % p.h + p.ph, plane = t / p.h;
    // The windows holding the element: o with o * stride <= position < o * stride + window.
    const int32_t yLo = y - p.kh + 1 <= 0 ? 0 : (y - p.kh + 1 + p.sh - 1) / p.sh;
    const int32_t yHi = y < 0 ? -1 : min(y / p.sh, p.oh - 1);
    const int32_t xLo = x - p.kw + 1 <= 0 ? 0 : (x - p.kw + 1 + p.sw - 1) / p.sw;
    const int32_t xHi = x < 0 ? -1 : min(x / p.sw, p.ow - 1);
    typename Tr::S acc = *init;
    for (int32_t oy = yLo; oy <= yHi; ++oy)
      for (int32_t ox = xLo; ox <= xHi; ++ox) {
        const int32_t s = (plane * p.oh + oy) * p.ow + ox;
        if (chosen[s] == i) acc = combineStored<Tr>(comb, acc, source[s]);
      }
    out[i] = acc;
  }
}

// Result element i: the init value combined with the sources of the windows containing i that
// chose it, in increasing source order.
template <typename Tr, typename I>
__global__ void gatherSelectedKernel(const I* __restrict__ chosen, const typename Tr::S* __restrict__ source,
                                     const typename Tr::S* __restrict__ init, typename Tr::S* __restrict__ out,
                                     WindowScatterParams p, Comb comb) {
  const I nOut = static_cast<I>(p.nOut);
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < nOut; i += static_cast<I>(blockDim.x) * gridDim.x) {
    // The windows holding element x along dim d: o with o * stride - padLo <= x < that + window.
    I lo[kMaxRank], hi[kMaxRank], o[kMaxRank];
    I rem = i;
    bool any = true;
    for (int d = p.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(p.inDims[d]), stride = static_cast<I>(p.strides[d]);
      const I x = rem % dim + static_cast<I>(p.padLo[d]);
      rem /= dim;
      const I first = x - static_cast<I>(p.window[d]) + 1;
      lo[d] = first <= 0 ? 0 : (first + stride - 1) / stride;
      const I last = static_cast<I>(p.srcDims[d]) - 1;
      hi[d] = x < 0 ? -1 : (x / stride < last ? x / stride : last);
      o[d] = lo[d];
      any = any && lo[d] <= hi[d];
    }
    typename Tr::S acc = *init;
    while (any) {
      I s = 0;
      for (int d = 0; d < p.rank; ++d) s = s * static_cast<I>(p.srcDims[d]) + o[d];
      if (chosen[s] == i) acc = combineStored<Tr>(comb, acc, source[s]);
      int d = p.rank - 1;  // the next window, row-major
      while (d >= 0 && o[d] == hi[d]) {
        o[d] = lo[d];
        --d;
      }
      if (d < 0) break;
      ++o[d];
    }
    out[i] = acc;
  }
}

Results lowerSelectAndScatter(const Operation& op, LowerContext& ctx) {
  if (op.numOperands() != 3 || op.numResults() != 1 || op.numRegions() != 2 || op.region(0).empty() ||
      op.region(1).empty())
    return invalidArgument(op.describe() + ": expects operand, source, init_value and two regions");
  const ElementType et = op.operand(0)->type().elementType();
  for (size_t i = 1; i < 3; ++i)
    if (op.operand(i)->type().elementType() != et)
      return unsupportedOnCuda(op, "no CUDA kernel for select_and_scatter of mixed element types");
  if (op.result(0)->type().elementType() != et || et == ElementType::kI1 || !isGpuComputeType(et))
    return unsupportedOnCuda(op, "no CUDA kernel for select_and_scatter of " + std::string(elementTypeName(et)));
  const Block& sel = op.region(0).front();
  const Block& sca = op.region(1).front();
  const Type scalarType = Type::tensor({}, et);
  if (sel.numArguments() != 2 || sca.numArguments() != 2 || sel.argument(0)->type() != scalarType ||
      sca.argument(0)->type() != scalarType || sca.argument(1)->type() != scalarType)
    return unsupportedOnCuda(op, "no CUDA kernel for select_and_scatter regions on other types");
  // select: one compare of (a, b); scatter: one binary op of its two arguments.
  const Operation* selRet = sel.terminator();
  const Operation* cmp = selRet && selRet->numOperands() == 1 ? selRet->operand(0)->definingOp() : nullptr;
  if (!cmp || cmp->code() != OpCode::Compare || cmp->numOperands() != 2 || sel.operations().size() != 2)
    return unsupportedOnCuda(op, "no CUDA kernel for this select region (only one compare)");
  const bool direct = cmp->operand(0) == sel.argument(0) && cmp->operand(1) == sel.argument(1);
  const bool swapped = cmp->operand(0) == sel.argument(1) && cmp->operand(1) == sel.argument(0);
  const Attribute* dirAttr = cmp->attr("comparison_direction");
  const Attribute* typeAttr = cmp->attr("compare_type");
  const std::string ct = typeAttr ? typeAttr->stringValue() : std::string();
  if ((!direct && !swapped) || !dirAttr || ct == "TOTALORDER" || (ct == "SIGNED" && isUnsignedInteger(et)) ||
      (ct == "UNSIGNED" && isSignedInteger(et)))
    return unsupportedOnCuda(op, "no CUDA kernel for this select region");
  std::string d = dirAttr->stringValue();
  if (swapped) d = d == "GE" ? "LE" : d == "LE" ? "GE" : d == "GT" ? "LT" : d == "LT" ? "GT" : d;
  SelDir dir;
  if (d == "GE") dir = SelDir::kGE;
  else if (d == "GT") dir = SelDir::kGT;
  else if (d == "LE") dir = SelDir::kLE;
  else if (d == "LT") dir = SelDir::kLT;
  else return unsupportedOnCuda(op, "no CUDA kernel for a select compare " + d);
  const Operation* scaRet = sca.terminator();
  const Operation* f = scaRet && scaRet->numOperands() == 1 ? scaRet->operand(0)->definingOp() : nullptr;
  if (!f || sca.operations().size() != 2 || f->numOperands() != 2 ||
      !((f->operand(0) == sca.argument(0) && f->operand(1) == sca.argument(1)) ||
        (f->operand(0) == sca.argument(1) && f->operand(1) == sca.argument(0))))
    return unsupportedOnCuda(op, "no CUDA kernel for this scatter region (only one add, multiply, maximum, minimum)");
  Comb comb;
  switch (f->code()) {
    case OpCode::Add: comb = Comb::kAdd; break;
    case OpCode::Multiply: comb = Comb::kMul; break;
    case OpCode::Maximum: comb = Comb::kMax; break;
    case OpCode::Minimum: comb = Comb::kMin; break;
    default: return unsupportedOnCuda(op, "no CUDA kernel for this scatter region (only one add, multiply, maximum, minimum)");
  }
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> srcShape, staticShape(op, op.operand(1)->type()));
  const size_t r = inShape.size();
  if (r > static_cast<size_t>(kMaxRank) || srcShape.size() != r)
    return unsupportedOnCuda(op, "select_and_scatter of rank over the CUDA kernels' limit");
  auto listOr = [&](const char* name, std::vector<int64_t> fallback) {
    const Attribute* a = op.attr(name);
    if (a)
      if (auto v = a->asIntList()) return *v;
    return fallback;
  };
  const std::vector<int64_t> window = listOr("window_dimensions", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> strides = listOr("window_strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> padding = listOr("padding", std::vector<int64_t>(2 * r, 0));
  if (window.size() != r || strides.size() != r || padding.size() != 2 * r)
    return invalidArgument(op.describe() + ": window attributes must have one entry per dimension");
  WindowScatterParams p;
  p.rank = static_cast<int>(r);
  const std::vector<int64_t> inStrides = rowMajorStridesOf(inShape);
  for (size_t i = 0; i < r; ++i) {
    if (window[i] < 1 || strides[i] < 1) return invalidArgument(op.describe() + ": window sizes and strides must be positive");
    // The number of windows must be the source's shape.
    const int64_t padded = inShape[i] + padding[2 * i] + padding[2 * i + 1];
    const int64_t windows = padded < window[i] ? 0 : (padded - window[i]) / strides[i] + 1;
    if (windows != srcShape[i]) return invalidArgument(op.describe() + ": source shape does not match the windows");
    p.inDims[i] = inShape[i];
    p.inStrides[i] = inStrides[i];
    p.srcDims[i] = srcShape[i];
    p.window[i] = window[i];
    p.strides[i] = strides[i];
    p.padLo[i] = padding[2 * i];
    p.windowSize *= window[i];
  }
  p.nSource = numElementsOf(srcShape);
  p.nOut = numElementsOf(inShape);
  // The chosen offsets and the index math: 32-bit where the operand's and source's offsets fit.
  const bool wide = p.nOut > INT32_MAX || p.nSource > INT32_MAX;
  const size_t chosenBytes = static_cast<size_t>(p.nSource) * (wide ? sizeof(int64_t) : sizeof(int32_t));
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, chosenBytes);
  return dispatchType(et, Results(unsupportedOnCuda(op, "no CUDA kernel for select_and_scatter of " + std::string(elementTypeName(et)))),
                      [&](auto tag) -> Results {
                        using Tr = decltype(tag);
                        return makeKernel([p, dir, comb, wide, chosenBytes](const LaunchContext& lc, std::span<void* const> in,
                                                                            std::span<void* const> out) -> Status {
                          if (p.nOut == 0) return Status::ok();
                          using S = typename Tr::S;
                          if (chosenBytes > 0 && (!lc.workspace || lc.workspaceBytes < chosenBytes))
                            return internalError("select_and_scatter: workspace too small for the chosen offsets");
                          PoolScatterParams pool;
                          if (poolForm(p, &pool)) {
                            int32_t* chosen = static_cast<int32_t*>(lc.workspace);
                            if (p.nSource > 0) {
                              selectInPoolWindowsKernel<Tr><<<gridFor(p.nSource), kThreads, 0, lc.stream>>>(
                                  static_cast<const S*>(in[0]), chosen, pool, dir);
                              WF_CUDA_CHECK_LAUNCH("selectInPoolWindowsKernel");
                            }
                            gatherPoolSelectedKernel<Tr><<<gridFor(p.nOut), kThreads, 0, lc.stream>>>(
                                chosen, static_cast<const S*>(in[1]), static_cast<const S*>(in[2]), static_cast<S*>(out[0]),
                                pool, comb);
                            WF_CUDA_CHECK_LAUNCH("gatherPoolSelectedKernel");
                            return Status::ok();
                          }
                          auto run = [&](auto index) {
                            using I = decltype(index);
                            I* chosen = static_cast<I*>(lc.workspace);
                            if (p.nSource > 0) {
                              selectInWindowsKernel<Tr, I><<<gridFor(p.nSource), kThreads, 0, lc.stream>>>(
                                  static_cast<const S*>(in[0]), chosen, p, dir);
                              WF_CUDA_CHECK_LAUNCH("selectInWindowsKernel");
                            }
                            gatherSelectedKernel<Tr, I><<<gridFor(p.nOut), kThreads, 0, lc.stream>>>(
                                chosen, static_cast<const S*>(in[1]), static_cast<const S*>(in[2]), static_cast<S*>(out[0]), p,
                                comb);
                            WF_CUDA_CHECK_LAUNCH("gatherSelectedKernel");
                            return Status::ok();
                          };
                          return wide ? run(int64_t{0}) : run(int32_t{0});
                        });
                      });
}

}  // namespace

void registerScatterLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::Scatter, lowerScatter);
  r.add(OpCode::SelectAndScatter, lowerSelectAndScatter);
}

}  // namespace wf::cuda
