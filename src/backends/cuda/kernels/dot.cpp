// dot_general and dot through cuBLASLt.
//
// Each operand's dims split into batch, contracting and free groups. When each group collapses
// to one (size, stride) pair and one of the matrix dims is unit-stride, the operand is passed to
// cuBLASLt in place, as a (possibly transposed, possibly strided-batched) matrix: transposes are
// folded into the matrix layout instead of copied. Otherwise the operand is first copied into
// the canonical row-major [batch, free, contracting] (lhs) or [batch, contracting, free] (rhs)
// order in the program's workspace.
//
// The result [batch..., lhs free..., rhs free...] is row-major, which cuBLASLt (column-major)
// sees as D = R x L with R the rhs (N x K) and L the lhs (K x M) per batch.
//
// A product whose result only a bias add reads (PyTorch's Linear under bf16, as the exporter
// writes it) runs with that add as cuBLASLt's bias epilogue (lowerDotBiasEpilogue, dot.h).
//
// Precision: f32 is computed in true f32 (CUBLAS_COMPUTE_32F) unless CompileOptions::allowTf32;
// f16 and bf16 multiply on tensor cores and accumulate in f32; f64 in f64. A dot `algorithm`
// attribute overrides that (and allowTf32) with the precision it names, or fails as unsupported;
// see algorithmConfig.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/kernels/dot.h"

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/tuning.h"
#include "ir/attr_reader.h"
#include "ir/float_types.h"

namespace wf::cuda {
namespace {

constexpr size_t kCublasWorkspace = size_t{32} << 20;

struct Group {
  int64_t size = 1;
  int64_t stride = 0;  // of the innermost dim of the group (0 for an empty group)
};

// Collapses `dims` (in this order) of a row-major tensor into one dim; false if they are not
// nested in that order.
bool collapse(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, const std::vector<int64_t>& dims,
              Group* g) {
  std::vector<int64_t> kept;
  for (int64_t d : dims)
    if (shape[static_cast<size_t>(d)] != 1) kept.push_back(d);
  g->size = 1;
  for (int64_t d : dims) g->size *= shape[static_cast<size_t>(d)];
  if (kept.empty()) {
    g->stride = 0;
    return true;
  }
  for (size_t i = 0; i + 1 < kept.size(); ++i) {
    const auto a = static_cast<size_t>(kept[i]), b = static_cast<size_t>(kept[i + 1]);
    if (strides[a] != strides[b] * shape[b]) return false;
  }
  g->stride = strides[static_cast<size_t>(kept.back())];
  return true;
}

// One operand as cuBLASLt sees it: a column-major matrix, maybe transposed, maybe batched.
struct MatrixView {
  bool transpose = false;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batchStride = 0;
};

// The operand holds, per batch, a matrix X[outer, inner] with element (o, i) at o*so + i*si,
// and cuBLASLt needs op(X) of shape inner x outer in column-major (i.e. X^T... see callers).
// Returns false if neither dim is unit-stride (or the leading dimension is too small).
// `want`: the column-major matrix op(A) has `wantRows` rows indexed by `r` (stride sr) and
// `wantCols` columns indexed by `c` (stride sc).
bool viewOf(int64_t wantRows, int64_t sr, int64_t wantCols, int64_t sc, MatrixView* v) {
  // Unit dims may take any stride.
  if (wantRows == 1) sr = 1;
  if (wantCols == 1 && sr != 1) sc = 1;
  if (sr == 1 && (sc >= std::max<int64_t>(wantRows, 1) || wantCols == 1)) {
    v->transpose = false;
    v->rows = static_cast<uint64_t>(wantRows);
    v->cols = static_cast<uint64_t>(wantCols);
    v->ld = std::max<int64_t>({sc, wantRows, 1});
    return true;
  }
  if (sc == 1 && sr >= std::max<int64_t>(wantCols, 1)) {
    v->transpose = true;
    v->rows = static_cast<uint64_t>(wantCols);
    v->cols = static_cast<uint64_t>(wantRows);
    v->ld = std::max<int64_t>({sr, wantCols, 1});
    return true;
  }
  return false;
}

struct DotDims {
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
};

Expected<DotDims> dotDims(const Operation& op, size_t lhsRank, size_t rhsRank) {
  DotDims d;
  if (op.code() == OpCode::Dot) {
    d.lhsContract = {static_cast<int64_t>(lhsRank) - 1};
    d.rhsContract = {0};
    return d;
  }
  const Attribute* dn = op.attr("dot_dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing dot_dimension_numbers");
  auto list = [&](const char* name) -> std::vector<int64_t> {
    const Attribute* f = dn->field(name);
    if (!f) return {};
    auto v = f->asIntList();
    return v ? *v : std::vector<int64_t>{};
  };
  d.lhsBatch = list("lhs_batching_dimensions");
  d.rhsBatch = list("rhs_batching_dimensions");
  d.lhsContract = list("lhs_contracting_dimensions");
  d.rhsContract = list("rhs_contracting_dimensions");
  if (d.lhsBatch.size() != d.rhsBatch.size() || d.lhsContract.size() != d.rhsContract.size())
    return invalidArgument(op.describe() + ": unpaired batching or contracting dimensions");
  return d;
}

std::vector<int64_t> freeDims(size_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contract.begin(), contract.end(), d) == contract.end())
      out.push_back(d);
  return out;
}

struct TypeConfig {
  cudaDataType_t in, out, scale;
  cublasComputeType_t compute;
};

Expected<TypeConfig> typeConfig(const Operation& op, ElementType in, ElementType out, bool allowTf32) {
  auto unsupported = [&] {
    return unsupportedOnCuda(op, "no cuBLASLt kernel for " + std::string(elementTypeName(in)) + " x " +
                                     std::string(elementTypeName(in)) + " -> " + std::string(elementTypeName(out)));
  };
  switch (in) {
    case ElementType::kF32:
      if (out != ElementType::kF32) return unsupported();
      return TypeConfig{CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                        allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case ElementType::kF64:
      if (out != ElementType::kF64) return unsupported();
      return TypeConfig{CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case ElementType::kF16:
    case ElementType::kBF16: {
      const cudaDataType_t t = in == ElementType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
      if (out == in) return TypeConfig{t, t, CUDA_R_32F, CUBLAS_COMPUTE_32F};
      if (out == ElementType::kF32) return TypeConfig{t, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
      return unsupported();
    }
    default:
      return unsupported();
  }
}

// The dot `algorithm` attribute (spec "dot_general"): the precision each operand is rounded to,
// the accumulation type, and the components and primitive products of an emulation.
struct DotAlgorithm {
  std::string lhs, rhs, accumulation;  // type names: "f32", "tf32", "bf16", "f16", "f64", ...
  int64_t lhsComponents = 0, rhsComponents = 0, primitiveOps = 0;
  bool imprecise = false;

  // Whether this is the algorithm of these types and number of products. The component counts
  // are not compared: StableHLO itself tells the known algorithms apart by the other fields.
  bool is(const char* precision, const char* acc, int64_t ops) const {
    return lhs == precision && rhs == precision && accumulation == acc && primitiveOps == ops;
  }
  std::string describe() const {
    return "<" + lhs + " x " + rhs + " -> " + accumulation + ", components " + std::to_string(lhsComponents) + " x " +
           std::to_string(rhsComponents) + ", " + std::to_string(primitiveOps) + " products" +
           (imprecise ? ", imprecise accumulation" : "") + ">";
  }
};

// The op's algorithm; nullopt if it has none or an empty one (every field absent).
std::optional<DotAlgorithm> dotAlgorithm(const Operation& op) {
  const Attribute* a = op.attr("algorithm");
  if (!a || a->fields().empty()) return std::nullopt;
  // Precision types parse as type attributes (f32, bf16), or as bare words where the name is no
  // element type (tf32).
  auto typeName = [&](const char* field) -> std::string {
    const Attribute* f = a->field(field);
    if (!f) return "";
    if (f->kind() == Attribute::Kind::kType && f->typeValue().isTensor())
      return std::string(elementTypeName(f->typeValue().elementType()));
    return f->stringValue();
  };
  auto count = [&](const char* field) -> int64_t {
    const Attribute* f = a->field(field);
    return f ? f->asInt().value_or(0) : 0;
  };
  DotAlgorithm d;
  d.lhs = typeName("lhs_precision_type");
  d.rhs = typeName("rhs_precision_type");
  d.accumulation = typeName("accumulation_type");
  d.lhsComponents = count("lhs_component_count");
  d.rhsComponents = count("rhs_component_count");
  d.primitiveOps = count("num_primitive_operations");
  if (const Attribute* f = a->field("allow_imprecise_accumulation"))
    d.imprecise = f->kind() == Attribute::Kind::kBool ? f->boolValue() : f->asInt().value_or(0) != 0;
  return d;
}

// The cuBLASLt configuration that computes `alg` on operands of type `in` with a result of type
// `out`: the operands rounded to the named precision (no rounding where the storage type already
// fits in it) and summed in the named accumulation type. An algorithm cuBLASLt has no mode for
// is unsupported (the spec asks for an error rather than another precision): bf16_3x, bf16_6x
// and tf32_3x (cuBLASLt does not split operands into components), bf16 accumulation, f8.
// allow_imprecise_accumulation permits a lower-precision accumulation and is honoured by not
// using one.
Expected<TypeConfig> algorithmConfig(const Operation& op, const DotAlgorithm& alg, ElementType in, ElementType out) {
  auto unsupported = [&] {
    return unsupportedOnCuda(op, "no cuBLASLt mode for the dot algorithm " + alg.describe() + " on " +
                                     std::string(elementTypeName(in)) + " operands with a " +
                                     std::string(elementTypeName(out)) + " result");
  };
  WF_ASSIGN_OR_RETURN(TypeConfig tc, typeConfig(op, in, out, /*allowTf32=*/false));
  const bool f32 = in == ElementType::kF32, half = in == ElementType::kF16, bf16 = in == ElementType::kBF16;
  // Single-pass algorithms accumulating in f32. f16 and bf16 values are exact in f32 and tf32, and
  // their products exact in f32, so on such operands these are cuBLASLt's plain f32 mode.
  if (alg.is("f32", "f32", 1) && (f32 || half || bf16)) return tc;  // CUBLAS_COMPUTE_32F
  if (alg.is("tf32", "f32", 1) && (f32 || half || bf16)) {
    if (f32) tc.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    return tc;
  }
  if (alg.is("bf16", "f32", 1) && (f32 || bf16)) {
    // On f32 operands cuBLASLt rounds them to bf16 (or, its documentation allows, to the finer tf32).
    if (f32) tc.compute = CUBLAS_COMPUTE_32F_FAST_16BF;
    return tc;
  }
  if (alg.is("f16", "f32", 1) && (f32 || half)) {
    // On f32 operands cuBLASLt rounds them to f16 (or, its documentation allows, to tf32).
    if (f32) tc.compute = CUBLAS_COMPUTE_32F_FAST_16F;
    return tc;
  }
  if (alg.is("f16", "f16", 1) && half && out == ElementType::kF16)
    return TypeConfig{CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F};
  if (alg.is("f64", "f64", 1) && in == ElementType::kF64) return tc;  // CUBLAS_COMPUTE_64F
#if CUBLAS_VERSION >= 120900
  // bf16_9x: each f32 operand split into three bf16 components, nine products summed in f32;
  // cuBLASLt's own emulation of f32 (as accurate as f32, its documentation says).
  if (alg.is("bf16", "f32", 9) && f32) {
    tc.compute = CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
    return tc;
  }
#endif
  return unsupported();
}

// An operand prepared for cuBLASLt: either used in place or first copied to canonical order.
struct OperandPlan {
  std::shared_ptr<const StridedCopyPlan> copy;  // null: used in place
  size_t copyOffset = 0;                        // in the workspace
  size_t copyBytes = 0;
  MatrixView view;
};

class DotKernel final : public OpKernel {
 public:
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (outBytes_ == 0) return Status::ok();
    if (zeroK_) {
      WF_CUDA_CHECK(cudaMemsetAsync(out[0], 0, outBytes_, ctx.stream));
      return Status::ok();
    }
    if (biasEpilogue_) {
      // The bias is an operand: its address is the launch's (a CUDA graph records this call).
      const void* bias = in[2];
      WF_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    const void* ptrs[2] = {in[0], in[1]};
    for (int k = 0; k < 2; ++k) {
      const OperandPlan& p = operands_[k];
      if (!p.copy) continue;
      void* dst = static_cast<char*>(ctx.workspace) + p.copyOffset;
      WF_RETURN_IF_ERROR(launchStridedCopy(ctx.stream, elemBytes_, *p.copy, ptrs[k], dst));
      ptrs[k] = dst;
    }
    if (ctx.workspaceBytes < cublasOffset_ + cublasBytes_) return internalError("dot workspace too small");
    void* ws = static_cast<char*>(ctx.workspace) + cublasOffset_;
    // D = R (rhs, "A") x L (lhs, "B").
    WF_CUBLAS_CHECK(cublasLtMatmul(ctx.device->cublasLt(), desc_.get(), alpha(), ptrs[1], a_.get(), ptrs[0],
                                   b_.get(), beta(), out[0], d_.get(), out[0], d_.get(), &algo_, ws, cublasBytes_,
                                   ctx.stream));
    return Status::ok();
  }

  // 1 and 0 in the scale type.
  const void* alpha() const {
    return scale_ == CUDA_R_64F   ? static_cast<const void*>(&alphaD_)
           : scale_ == CUDA_R_16F ? static_cast<const void*>(&alphaH_)
                                  : static_cast<const void*>(&alphaF_);
  }
  const void* beta() const {
    return scale_ == CUDA_R_64F   ? static_cast<const void*>(&betaD_)
           : scale_ == CUDA_R_16F ? static_cast<const void*>(&betaH_)
                                  : static_cast<const void*>(&betaF_);
  }

  size_t outBytes_ = 0;
  bool zeroK_ = false;
  bool biasEpilogue_ = false;  // in[2] is the bias of CUBLASLT_EPILOGUE_BIAS
  int elemBytes_ = 0;
  OperandPlan operands_[2];  // lhs, rhs
  size_t cublasOffset_ = 0;
  size_t cublasBytes_ = 0;
  cudaDataType_t scale_ = CUDA_R_32F;
  float alphaF_ = 1, betaF_ = 0;
  double alphaD_ = 1, betaD_ = 0;
  uint16_t alphaH_ = 0x3C00, betaH_ = 0;  // f16 1 and 0
  MatmulDesc desc_;
  MatrixLayout a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
};

Status setBatch(cublasLtMatrixLayout_t l, int64_t count, int64_t stride) {
  const int32_t c = static_cast<int32_t>(count);
  WF_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof c));
  WF_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  return Status::ok();
}

Expected<MatrixLayout> makeLayout(cudaDataType_t t, const MatrixView& v, int64_t batch, int64_t batchStride) {
  cublasLtMatrixLayout_t l = nullptr;
  WF_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, t, v.rows, v.cols, v.ld));
  MatrixLayout layout(l);
  if (batch > 1) WF_RETURN_IF_ERROR(setBatch(l, batch, batchStride));
  return layout;
}

// The hex digits of an algorithm's opaque bytes (what a tuning decision stores).
std::string algoText(const cublasLtMatmulAlgo_t& algo) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&algo);
  for (size_t i = 0; i < sizeof algo; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

// Of `candidates` (cuBLASLt's heuristics' ranking), the fastest for this product, timed once per
// problem and kept (tuning.h). `problem` names the product whole.
Expected<cublasLtMatmulHeuristicResult_t> tuneMatmul(LowerContext& ctx, const DotKernel& k,
                                                     const std::vector<cublasLtMatmulHeuristicResult_t>& candidates,
                                                     const std::string& problem, size_t lhsBytes, size_t rhsBytes,
                                                     size_t biasBytes) {
  if (candidates.size() == 1) return candidates.front();
  WF_ASSIGN_OR_RETURN(std::optional<std::string> known, loadTuningDecision(ctx.device, ctx.options, problem));
  if (known)
    for (const cublasLtMatmulHeuristicResult_t& c : candidates)
      if (algoText(c.algo) == *known) return c;
  const auto tuningStart = std::chrono::steady_clock::now();
  TuningBuffer lhs, rhs, out, ws;
  WF_RETURN_IF_ERROR(lhs.allocate(lhsBytes));
  WF_RETURN_IF_ERROR(rhs.allocate(rhsBytes));
  WF_RETURN_IF_ERROR(out.allocate(k.outBytes_));
  size_t workspace = 0;
  for (const cublasLtMatmulHeuristicResult_t& c : candidates) workspace = std::max(workspace, c.workspaceSize);
  WF_RETURN_IF_ERROR(ws.allocate(workspace));
  TuningBuffer bias;
  if (k.biasEpilogue_) {
    WF_RETURN_IF_ERROR(bias.allocate(biasBytes));
    const void* address = bias.data();
    WF_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(k.desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &address, sizeof address));
  }
  const cublasLtMatmulHeuristicResult_t best =
      candidates[fastestCandidate(candidates.size(), [&](size_t i, cudaStream_t stream) -> Status {
        const cublasLtMatmulHeuristicResult_t& c = candidates[i];
        WF_CUBLAS_CHECK(cublasLtMatmul(ctx.device.cublasLt(), k.desc_.get(), k.alpha(), rhs.data(), k.a_.get(),
                                       lhs.data(), k.b_.get(), k.beta(), out.data(), k.d_.get(), out.data(), k.d_.get(),
                                       &c.algo, ws.data(), c.workspaceSize, stream));
        return Status::ok();
      }, problem, [&](size_t i) { return algoText(candidates[i].algo); })];
  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tuningStart).count();
  WF_RETURN_IF_ERROR(storeTuningDecision(ctx.device, ctx.options, problem, algoText(best.algo), millis));
  return best;
}

// The bias epilogue's arithmetic, as the group it replaces computes it (dot.h): the sum rounded to
// T, widened, plus the bias in f32, rounded to T.
float roundTo(ElementType t, float x) {
  return t == ElementType::kBF16 ? bf16ToFloat(floatToBf16(x)) : f16ToFloat(floatToF16(x));
}
uint16_t bitsOf(ElementType t, float x) { return t == ElementType::kBF16 ? floatToBf16(x) : floatToF16(x); }

// The check of dot.h: every lhs element a, every rhs element v, so every sum is K.a.v whatever
// the order and the operand layouts, exact in f32 (a.v has few significant bits); column j's bias
// is b_j = (j mod 64 - 32) / 4, sweeping 16 units around the sum, so that where the sum is not a
// value of T, rounding it before adding the bias and rounding once differ on some columns. The
// values are chosen so that they do (nothing to check otherwise: it declines). The verdict is
// kept per problem and algorithm: the same process never checks one twice.
Status checkBiasRounding(LowerContext& ctx, const Operation& op, const DotKernel& k,
                         const cublasLtMatmulHeuristicResult_t& chosen, ElementType t, int64_t n, int64_t kk,
                         size_t lhsBytes, size_t rhsBytes, const std::string& problem) {
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> verdicts;
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(&ctx.device)) + " " + problem + " algo " +
                          algoText(chosen.algo);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = verdicts.find(key); it != verdicts.end())
      return it->second ? Status::ok() : unsupportedOnCuda(op, "cuBLASLt's bias epilogue rounds otherwise here");
  }
  auto biasOf = [](int64_t j) { return static_cast<float>(j % 64 - 32) / 4.0f; };
  float a = 0, v = 0, sum = 0;
  for (float ca : {3.0f, 5.0f, 7.0f, 11.0f, 13.0f})
    for (float cv : {1.0f + 3.0f / 128.0f, 1.0f + 3.0f / 1024.0f}) {
      const double exact = static_cast<double>(kk) * ca * cv;
      if (a != 0 || static_cast<double>(static_cast<float>(exact)) != exact || roundTo(t, cv) != cv ||
          !std::isfinite(roundTo(t, static_cast<float>(exact) + 8.0f)))
        continue;
      const auto s = static_cast<float>(exact);
      for (int64_t j = 0; j < std::min<int64_t>(n, 64) && a == 0; ++j)
        if (roundTo(t, roundTo(t, s) + biasOf(j)) != roundTo(t, s + biasOf(j))) a = ca, v = cv, sum = s;
    }
  if (a == 0) return unsupportedOnCuda(op, "no values tell the bias epilogue's rounding apart on this problem");
  const size_t elem = storageBytes(t);
  std::vector<uint16_t> lhs(lhsBytes / elem, bitsOf(t, a)), rhs(rhsBytes / elem, bitsOf(t, v));
  std::vector<uint16_t> bias(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) bias[static_cast<size_t>(j)] = bitsOf(t, biasOf(j));
  TuningBuffer dl, dr, db, dout, ws;
  WF_RETURN_IF_ERROR(dl.allocate(lhsBytes));
  WF_RETURN_IF_ERROR(dr.allocate(rhsBytes));
  WF_RETURN_IF_ERROR(db.allocate(bias.size() * elem));
  WF_RETURN_IF_ERROR(dout.allocate(k.outBytes_));
  WF_RETURN_IF_ERROR(ws.allocate(chosen.workspaceSize));
  WF_CUDA_CHECK(cudaMemcpy(dl.data(), lhs.data(), lhsBytes, cudaMemcpyHostToDevice));
  WF_CUDA_CHECK(cudaMemcpy(dr.data(), rhs.data(), rhsBytes, cudaMemcpyHostToDevice));
  WF_CUDA_CHECK(cudaMemcpy(db.data(), bias.data(), bias.size() * elem, cudaMemcpyHostToDevice));
  const void* biasAddress = db.data();
  WF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(k.desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasAddress,
                                                 sizeof biasAddress));
  WF_CUBLAS_CHECK(cublasLtMatmul(ctx.device.cublasLt(), k.desc_.get(), k.alpha(), dr.data(), k.a_.get(), dl.data(),
                                 k.b_.get(), k.beta(), dout.data(), k.d_.get(), dout.data(), k.d_.get(), &chosen.algo,
                                 ws.data(), chosen.workspaceSize, nullptr));
  WF_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> out(k.outBytes_ / elem);
  WF_CUDA_CHECK(cudaMemcpy(out.data(), dout.data(), k.outBytes_, cudaMemcpyDeviceToHost));
  // Every element rounded twice (the product, then the sum), or every one rounded once.
  bool twice = true, once = true;
  for (size_t e = 0; e < out.size() && (twice || once); ++e) {
    const float b = biasOf(static_cast<int64_t>(e) % n);
    twice = twice && out[e] == bitsOf(t, roundTo(t, sum) + b);
    once = once && out[e] == bitsOf(t, sum + b);
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    verdicts[key] = twice || once;
  }
  if (tuningLogOn())
    std::cerr << "warpforge: cuBLASLt's bias epilogue rounds " << (twice ? "twice" : once ? "once" : "otherwise")
              << " on " << problem << "\n";
  if (!twice && !once) return unsupportedOnCuda(op, "cuBLASLt's bias epilogue rounds otherwise here");
  return Status::ok();
}

// lowerDot's cuBLASLt path; with `bias`, the bias epilogue (dot.h), the bias (of the result's
// type) being the kernel's third input.
Expected<std::unique_ptr<OpKernel>> lowerMatmul(const Operation& op, LowerContext& ctx, bool bias = false);

Expected<std::unique_ptr<OpKernel>> lowerDot(const Operation& op, LowerContext& ctx) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ls, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rs, staticShape(op, op.operand(1)->type()));
  const ElementType inType = op.operand(0)->type().elementType();
  if (op.operand(1)->type().elementType() != inType)
    return unsupportedOnCuda(op, "no cuBLASLt kernel for mixed operand types");
  const ElementType outType = op.result(0)->type().elementType();
  const std::optional<DotAlgorithm> alg = dotAlgorithm(op);
  if (takesDirectDot(inType, outType)) {
    // The algorithm names floating-point roundings; integer products and sums round nothing (they
    // wrap in the result type, on the CPU too), so on integers it has nothing to change. f32
    // operands with an f64 result are summed in f64: exactly the f64 algorithm.
    if (alg && !isInteger(inType) && !alg->is("f64", "f64", 1))
      return unsupportedOnCuda(op, "no kernel for the dot algorithm " + alg->describe() + " on " +
                                       std::string(elementTypeName(inType)) + " operands with a " +
                                       std::string(elementTypeName(outType)) + " result");
    WF_ASSIGN_OR_RETURN(DotDims d, dotDims(op, ls.size(), rs.size()));
    return lowerDirectDot(op, DotDimensionLists{d.lhsBatch, d.rhsBatch, d.lhsContract, d.rhsContract});
  }
  return lowerMatmul(op, ctx);
}

Expected<std::unique_ptr<OpKernel>> lowerMatmul(const Operation& op, LowerContext& ctx, bool bias) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ls, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rs, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> os, staticShape(op, op.result(0)->type()));
  const ElementType inType = op.operand(0)->type().elementType();
  const ElementType outType = op.result(0)->type().elementType();
  const std::optional<DotAlgorithm> alg = dotAlgorithm(op);
  WF_ASSIGN_OR_RETURN(TypeConfig tc, alg ? algorithmConfig(op, *alg, inType, outType)
                                         : typeConfig(op, inType, outType, ctx.options.allowTf32));
  WF_ASSIGN_OR_RETURN(DotDims dd, dotDims(op, ls.size(), rs.size()));
  const std::vector<int64_t> lf = freeDims(ls.size(), dd.lhsBatch, dd.lhsContract);
  const std::vector<int64_t> rf = freeDims(rs.size(), dd.rhsBatch, dd.rhsContract);

  auto k = std::make_unique<DotKernel>();
  k->elemBytes_ = storageBytes(inType);
  k->outBytes_ = static_cast<size_t>(numElementsOf(os)) * static_cast<size_t>(storageBytes(outType));
  int64_t batch = 1, m = 1, n = 1, kk = 1;
  for (int64_t d : dd.lhsBatch) batch *= ls[static_cast<size_t>(d)];
  for (int64_t d : lf) m *= ls[static_cast<size_t>(d)];
  for (int64_t d : rf) n *= rs[static_cast<size_t>(d)];
  for (int64_t d : dd.lhsContract) kk *= ls[static_cast<size_t>(d)];
  if (bias && (batch != 1 || k->outBytes_ == 0 || kk == 0 || alg))
    return unsupportedOnCuda(op, "bias epilogue: a batched, empty or algorithm-bound product");
  if (k->outBytes_ == 0) return std::unique_ptr<OpKernel>(std::move(k));
  if (kk == 0) {
    k->zeroK_ = true;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  size_t wsOffset = 0;
  auto reserve = [&](size_t bytes) {
    const size_t at = wsOffset;
    wsOffset += (bytes + 255) / 256 * 256;
    return at;
  };

  // lhs: per batch, op(B) must be K x M: rows indexed by k, columns by m.
  // rhs: per batch, op(A) must be N x K: rows indexed by n, columns by k.
  auto plan = [&](int which, const std::vector<int64_t>& shape, const std::vector<int64_t>& bdims,
                  const std::vector<int64_t>& cdims, const std::vector<int64_t>& fdims, OperandPlan& p,
                  int64_t* batchStride) -> Status {
    std::vector<int64_t> strides = rowMajorStridesOf(shape);
    Group b, c, f;
    bool ok = collapse(shape, strides, bdims, &b) && collapse(shape, strides, cdims, &c) &&
              collapse(shape, strides, fdims, &f);
    if (ok) {
      ok = which == 0 ? viewOf(kk, c.stride, m, f.stride, &p.view) : viewOf(n, f.stride, kk, c.stride, &p.view);
    }
    if (ok) {
      *batchStride = b.size > 1 ? b.stride : 0;
      return Status::ok();
    }
    // Copy to canonical order: lhs [B, M, K], rhs [B, K, N], row-major.
    std::vector<int64_t> order = bdims;
    if (which == 0) {
      order.insert(order.end(), fdims.begin(), fdims.end());
      order.insert(order.end(), cdims.begin(), cdims.end());
    } else {
      order.insert(order.end(), cdims.begin(), cdims.end());
      order.insert(order.end(), fdims.begin(), fdims.end());
    }
    std::vector<int64_t> boxShape, srcStrides;
    for (int64_t d : order) {
      boxShape.push_back(shape[static_cast<size_t>(d)]);
      srcStrides.push_back(strides[static_cast<size_t>(d)]);
    }
    WF_ASSIGN_OR_RETURN(p.copy, planStridedCopy(op, boxShape, rowMajorStridesOf(boxShape), srcStrides, 0, 0));
    p.copyBytes = static_cast<size_t>(numElementsOf(shape)) * static_cast<size_t>(k->elemBytes_);
    p.copyOffset = reserve(p.copyBytes);
    const bool viewOk = which == 0 ? viewOf(kk, 1, m, kk, &p.view) : viewOf(n, 1, kk, n, &p.view);
    if (!viewOk) return internalError(op.describe() + ": canonical dot layout rejected");
    *batchStride = which == 0 ? m * kk : kk * n;
    return Status::ok();
  };
  int64_t lhsBatchStride = 0, rhsBatchStride = 0;
  WF_RETURN_IF_ERROR(plan(0, ls, dd.lhsBatch, dd.lhsContract, lf, k->operands_[0], &lhsBatchStride));
  WF_RETURN_IF_ERROR(plan(1, rs, dd.rhsBatch, dd.rhsContract, rf, k->operands_[1], &rhsBatchStride));

  k->scale_ = tc.scale;
  cublasLtMatmulDesc_t desc = nullptr;
  WF_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, tc.compute, tc.scale));
  k->desc_ = MatmulDesc(desc);
  const cublasOperation_t ta = k->operands_[1].view.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = k->operands_[0].view.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  WF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  WF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const auto biasType = static_cast<int32_t>(tc.out);
    WF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    WF_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType, sizeof biasType));
    k->biasEpilogue_ = true;
  }
  WF_ASSIGN_OR_RETURN(k->a_, makeLayout(tc.in, k->operands_[1].view, batch, rhsBatchStride));
  WF_ASSIGN_OR_RETURN(k->b_, makeLayout(tc.in, k->operands_[0].view, batch, lhsBatchStride));
  MatrixView dv;
  dv.rows = static_cast<uint64_t>(n);
  dv.cols = static_cast<uint64_t>(m);
  dv.ld = std::max<int64_t>(n, 1);
  WF_ASSIGN_OR_RETURN(k->d_, makeLayout(tc.out, dv, batch, m * n));

  k->cublasBytes_ = kCublasWorkspace;
  k->cublasOffset_ = reserve(k->cublasBytes_);
  cublasLtMatmulPreference_t pref = nullptr;
  WF_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  MatmulPreference prefHandle(pref);
  const uint64_t wsBytes = k->cublasBytes_;
  WF_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes,
                                                       sizeof wsBytes));
  std::vector<cublasLtMatmulHeuristicResult_t> results(kTunedCandidates);
  int found = 0;
  const cublasStatus_t heuristics =
      cublasLtMatmulAlgoGetHeuristic(ctx.device.cublasLt(), desc, k->a_.get(), k->b_.get(), k->d_.get(), k->d_.get(),
                                     pref, kTunedCandidates, results.data(), &found);
  // With the epilogue, a layout cuBLASLt refuses leaves the product and the add as two steps.
  if (bias && heuristics != CUBLAS_STATUS_SUCCESS) return unsupportedOnCuda(op, "cuBLASLt has no bias epilogue here");
  WF_CUBLAS_CHECK(heuristics);
  results.resize(static_cast<size_t>(std::max(found, 0)));
  std::erase_if(results, [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  if (results.empty())
    return unsupportedOnCuda(op, bias ? "cuBLASLt has no algorithm for this layout with a bias"
                                      : "cuBLASLt has no algorithm for this layout");
  // Split-K candidates beyond the heuristics' first are not timed: a split contraction is summed
  // in another grouping, so limiting the choice to unsplit algorithms keeps plans of one product
  // closer in their bits. (This was added while chasing a bitwise mismatch between two plans of
  // one program; the size threshold below is what removed it, and whether split-K played a part
  // was not established.)
  for (size_t i = results.size(); i-- > 1;) {
    int32_t splitK = 1;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitK, sizeof splitK,
                                             &written) != CUBLAS_STATUS_SUCCESS ||
        splitK != 1)
      results.erase(results.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (double(batch) * double(m) * double(n) * double(kk) < kTunedMinMultiplyAdds) results.resize(1);
  // Timed once per problem (tuning.h); the problem is everything the descriptors say.
  std::string problem;
  if (results.size() > 1 || bias) {
    problem = "cublasLtMatmul " + std::to_string(cublasLtGetVersion()) + " compute " +
              std::to_string(static_cast<int>(tc.compute)) + " scale " + std::to_string(static_cast<int>(tc.scale)) +
              " in " + std::to_string(static_cast<int>(tc.in)) + " out " + std::to_string(static_cast<int>(tc.out)) +
              " batch " + std::to_string(batch) + " m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
              std::to_string(kk);
    for (const OperandPlan& p : k->operands_)
      problem += " view " + std::to_string(p.view.transpose) + " " + std::to_string(p.view.rows) + " " +
                 std::to_string(p.view.cols) + " " + std::to_string(p.view.ld) + " copied " +
                 std::to_string(p.copy != nullptr);
    problem += " strides " + std::to_string(lhsBatchStride) + " " + std::to_string(rhsBatchStride);
    if (bias) problem += " bias";
  }
  const size_t lhsBytes = static_cast<size_t>(numElementsOf(ls)) * static_cast<size_t>(k->elemBytes_);
  const size_t rhsBytes = static_cast<size_t>(numElementsOf(rs)) * static_cast<size_t>(k->elemBytes_);
  const size_t biasBytes = bias ? static_cast<size_t>(n) * static_cast<size_t>(storageBytes(outType)) : 0;
  WF_ASSIGN_OR_RETURN(cublasLtMatmulHeuristicResult_t result,
                      tuneMatmul(ctx, *k, results, problem, lhsBytes, rhsBytes, biasBytes));
  if (bias)
    WF_RETURN_IF_ERROR(
        checkBiasRounding(ctx, op, *k, result, outType, n, kk, lhsBytes, rhsBytes, problem));
  k->algo_ = result.algo;
  // The program's workspace only needs what the chosen algorithm uses, not the cap it chose
  // under (the workspace counts toward the device memory a model takes).
  k->cublasBytes_ = result.workspaceSize;
  wsOffset = k->cublasOffset_ + (k->cublasBytes_ + 255) / 256 * 256;
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, wsOffset);
  return std::unique_ptr<OpKernel>(std::move(k));
}

}  // namespace

const Operation* groupMember(const FusionGroup& group, const Value* v) {
  const Operation* d = v->definingOp();
  return d && std::find(group.ops.begin(), group.ops.end(), d) != group.ops.end() ? d : nullptr;
}

const Operation* skipGroupReshapes(const FusionGroup& group, const Operation* op, std::vector<const Operation*>& matched) {
  while (op && op->code() == OpCode::Reshape) {
    matched.push_back(op);
    op = groupMember(group, op->operand(0));
  }
  return op;
}

const Operation* narrowedToType(const FusionGroup& group, ElementType t, std::vector<const Operation*>& matched) {
  const Operation* narrow = skipGroupReshapes(group, group.root(), matched);
  if (!narrow || narrow->code() != OpCode::Convert || narrow->result(0)->type().elementType() != t) return nullptr;
  matched.push_back(narrow);
  return skipGroupReshapes(group, groupMember(group, narrow->operand(0)), matched);
}

const Value* linearLayerBias(const Operation& dot, const FusionGroup& group, const Operation* add,
                             std::vector<const Operation*>& matched) {
  const Type& product = dot.result(0)->type();
  const ElementType t = product.elementType();
  if (!add || add->code() != OpCode::Add || add->result(0)->type() != Type::tensor(product.shape(), ElementType::kF32))
    return nullptr;
  const int64_t n = product.dim(product.rank() - 1);
  for (size_t side = 0; side < 2; ++side) {
    const Operation* widen = groupMember(group, add->operand(side));
    const Operation* spread = groupMember(group, add->operand(1 - side));
    if (!widen || widen->code() != OpCode::Convert || widen->operand(0) != dot.result(0) || !spread ||
        spread->code() != OpCode::BroadcastInDim || spread->operand(0)->type().shape() != std::vector<int64_t>{n})
      continue;
    Expected<std::vector<int64_t>> dims = AttrReader(*spread).ints("broadcast_dimensions");
    if (!dims || *dims != std::vector<int64_t>{product.rank() - 1}) continue;
    // The bias: a T value widened, in the group or before it.
    const Value* b = spread->operand(0);
    const Operation* widenBias = b->definingOp();
    if (!widenBias || widenBias->code() != OpCode::Convert || widenBias->operand(0)->type().elementType() != t) continue;
    matched.insert(matched.end(), {add, widen, spread});
    if (groupMember(group, b)) matched.push_back(widenBias);
    return widenBias->operand(0);
  }
  return nullptr;
}

Expected<DotBiasEpilogue> lowerDotBiasEpilogue(const Operation& dot, const FusionGroup& group, LowerContext& ctx) {
  auto decline = [&](const std::string& why) -> Status { return unsupportedOnCuda(dot, "bias epilogue: " + why); };
  if (dot.numOperands() != 2 || dot.numResults() != 1) return decline("not a product of two operands");
  const Type& product = dot.result(0)->type();
  const ElementType t = product.elementType();
  if ((t != ElementType::kBF16 && t != ElementType::kF16) || !product.hasStaticShape() || product.rank() < 1)
    return decline("a product of type " + product.toString());
  if (group.hasReduce() || !group.sideOutputs.empty()) return decline("the group reduces or writes side outputs");
  std::vector<const Operation*> matched;
  // From the root: the narrowing to T and the f32 add, reshapes (row-major: the same bytes)
  // around them.
  const Operation* sum = narrowedToType(group, t, matched);
  if (!sum) return decline("the group's result is not a value narrowed to the product's type");
  const Value* bias = linearLayerBias(dot, group, sum, matched);
  if (!bias) return decline("the narrowed value is not the product plus a bias of its type along the last dim");
  if (matched.size() != group.ops.size()) return decline("the group computes more than the bias add");
  WF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, lowerMatmul(dot, ctx, /*bias=*/true));
  return DotBiasEpilogue{std::move(kernel), bias};
}

void registerDotLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::DotGeneral, lowerDot);
  r.add(OpCode::Dot, lowerDot);
}

}  // namespace wf::cuda
