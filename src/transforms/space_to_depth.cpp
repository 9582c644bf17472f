// Strided convolutions over few input channels as stride-1 convolutions over a space-to-depth
// input (space_to_depth.h).
#include "transforms/space_to_depth.h"

#include <memory>
#include <optional>
#include <unordered_set>
#include <vector>

#include "ir/attr_reader.h"
#include "ir/builder.h"
#include "ir/window.h"

namespace wf {
namespace {

constexpr int64_t kBlock = 2;        // the stride, and the side of the pixel blocks read as channels
constexpr int64_t kMaxChannels = 4;  // input channels: 4 * 4 = 16 after the rewrite
constexpr int64_t kChannelMultiple = 8;

// The padding of a convolution taken by the rewrite, or nullopt where it is not one.
struct Match {
  std::vector<int64_t> padLow, padHigh;  // per spatial dim
};

std::optional<Match> match(const Operation& op, bool tf32Convolutions) {
  if (op.code() != OpCode::Convolution || op.numOperands() != 2 || op.numResults() != 1) return std::nullopt;
  const Type& x = op.operand(0)->type();
  const Type& w = op.operand(1)->type();
  const Type& y = op.result(0)->type();
  const ElementType e = x.elementType();
  const bool tensorCores = e == ElementType::kBF16 || e == ElementType::kF16 || (tf32Convolutions && e == ElementType::kF32);
  if (!tensorCores || w.elementType() != e || y.elementType() != e) return std::nullopt;
  if (!x.hasStaticShape() || !w.hasStaticShape() || !y.hasStaticShape() || x.rank() != 4 || w.rank() != 4)
    return std::nullopt;
  AttrReader attrs(op);
  Expected<const Attribute*> dn = attrs.dialectStruct("dimension_numbers");
  if (!dn) return std::nullopt;
  auto field = [&](const char* name) { return AttrReader::fieldInt(**dn, name); };
  const std::vector<int64_t> spatial{2, 3};
  if (field("input_batch_dimension") != 0 || field("input_feature_dimension") != 1 ||
      AttrReader::fieldInts(**dn, "input_spatial_dimensions") != spatial || field("kernel_output_feature_dimension") != 0 ||
      field("kernel_input_feature_dimension") != 1 || AttrReader::fieldInts(**dn, "kernel_spatial_dimensions") != spatial ||
      field("output_batch_dimension") != 0 || field("output_feature_dimension") != 1 ||
      AttrReader::fieldInts(**dn, "output_spatial_dimensions") != spatial)
    return std::nullopt;
  if (windowAttributeOr(op, "window_strides", 2, 1) != std::vector<int64_t>{kBlock, kBlock} ||
      windowAttributeOr(op, "lhs_dilation", 2, 1) != std::vector<int64_t>{1, 1} ||
      windowAttributeOr(op, "rhs_dilation", 2, 1) != std::vector<int64_t>{1, 1} || op.attr("window_reversal"))
    return std::nullopt;
  Expected<int64_t> featureGroups = attrs.integer("feature_group_count", 1);
  Expected<int64_t> batchGroups = attrs.integer("batch_group_count", 1);
  if (!featureGroups || !batchGroups || *featureGroups != 1 || *batchGroups != 1) return std::nullopt;
  const int64_t channels = x.shape()[1];
  if (channels < 1 || channels > kMaxChannels || w.shape()[1] != channels || w.shape()[2] < 3 || w.shape()[3] < 3)
    return std::nullopt;
  const std::vector<int64_t> padding = windowAttributeOr(op, "padding", 4, 0);
  Match m;
  for (size_t d = 0; d < 2; ++d) {
    m.padLow.push_back(padding[2 * d]);
    m.padHigh.push_back(padding[2 * d + 1]);
    if (m.padLow.back() < 0 || m.padHigh.back() < 0) return std::nullopt;
  }
  for (size_t d = 0; d < 2; ++d)
    if (y.shape()[2 + d] < 1 ||
        windowOutputSize(x.shape()[2 + d], w.shape()[2 + d], kBlock, m.padLow[d], m.padHigh[d]) != y.shape()[2 + d])
      return std::nullopt;
  return m;
}

// `v` padded with zeros by `low` and `high` per dim (a negative `high` crops), written as
// concatenations with zero splats rather than stablehlo.pad, so that the CUDA backend's loop
// fusion computes the input's whole rearrangement in one pass (it fuses concatenations and
// splats, not pads).
Value* padWithZeros(OpBuilder& b, Value* v, const std::vector<int64_t>& low, const std::vector<int64_t>& high) {
  for (size_t d = 0; d < low.size(); ++d) {
    auto zeros = [&](int64_t n) {
      std::vector<int64_t> shape = v->type().shape();
      shape[d] = n;
      return b.splat(v->type().withShape(shape), 0.0);
    };
    if (low[d] > 0) v = b.concatenate({zeros(low[d]), v}, static_cast<int64_t>(d));
    if (high[d] > 0) v = b.concatenate({v, zeros(high[d])}, static_cast<int64_t>(d));
    if (high[d] < 0) {
      std::vector<int64_t> start(low.size(), 0), limit = v->type().shape(), strides(low.size(), 1);
      limit[d] += high[d];
      v = b.slice(v, start, limit, strides);
    }
  }
  return v;
}

// [N, C, 2 * H', 2 * W'] (or [O, C, ...] for a filter) as [N, 4C, H', W'], channel (c, dy, dx),
// then zero channels up to `channels`.
Value* blocksAsChannels(OpBuilder& b, Value* v, int64_t channels) {
  const std::vector<int64_t>& s = v->type().shape();
  const int64_t rows = s[2] / kBlock, cols = s[3] / kBlock;
  Value* split = b.reshape(v, {s[0], s[1], rows, kBlock, cols, kBlock});
  Value* moved = b.transpose(split, {0, 1, 3, 5, 2, 4});
  Value* merged = b.reshape(moved, {s[0], s[1] * kBlock * kBlock, rows, cols});
  return padWithZeros(b, merged, {0, 0, 0, 0}, {0, channels - s[1] * kBlock * kBlock, 0, 0});
}

Status rewrite(Operation& conv, const Match& m, Block& body) {
  OpBuilder b(&body, conv.location());
  Value* x = conv.operand(0);
  Value* w = conv.operand(1);
  const std::vector<int64_t> xs = x->type().shape(), ws = w->type().shape(), ys = conv.result(0)->type().shape();
  const int64_t channels = (xs[1] * kBlock * kBlock + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;
  // Output pixel i reads padded input rows 2i .. 2i + 2a' - 1 with a' = ceil(k / 2): the padded
  // input needs 2 (out - 1 + a') rows, which may crop rows no window reads (a negative high pad).
  std::vector<int64_t> inputLow{0, 0}, inputHigh{0, 0}, filterHigh{0, 0};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t window = (ws[2 + d] + kBlock - 1) / kBlock;
    inputLow.push_back(m.padLow[d]);
    inputHigh.push_back(kBlock * (ys[2 + d] - 1 + window) - xs[2 + d] - m.padLow[d]);
    filterHigh.push_back(kBlock * window - ws[2 + d]);
  }
  Value* input = padWithZeros(b, x, inputLow, inputHigh);
  Value* filter = padWithZeros(b, w, {0, 0, 0, 0}, filterHigh);
  Value* blockedInput = blocksAsChannels(b, input, channels);
  Value* blockedFilter = blocksAsChannels(b, filter, channels);
  if (!b.ok()) return b.status().withContext(conv.describe() + ": space-to-depth");
  conv.setOperand(0, blockedInput);
  conv.setOperand(1, blockedFilter);
  conv.setAttr("window_strides", i64DenseArray({1, 1}));
  conv.setAttr("padding", i64Matrix({0, 0, 0, 0}, 2, 2));
  return Status::ok();
}

}  // namespace

Expected<int> spaceToDepthConvolutions(Operation& function, bool tf32Convolutions) {
  WF_ASSIGN_OR_RETURN(Block* bodyPtr, functionBody(function, "spaceToDepthConvolutions"));
  Block& body = *bodyPtr;
  // The block is rebuilt in order: each rewritten convolution's operands are rearranged just
  // before it.
  std::vector<std::unique_ptr<Operation>> ops = std::move(body.mutableOperations());
  body.mutableOperations().clear();
  int rewritten = 0;
  for (auto& op : ops) {
    if (std::optional<Match> m = match(*op, tf32Convolutions)) {
      WF_RETURN_IF_ERROR(rewrite(*op, *m, body));
      ++rewritten;
    }
    body.append(std::move(op));
  }
  return rewritten;
}

}  // namespace wf
