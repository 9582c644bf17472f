// Verifier tests on hand-built IR: each invalid op must be rejected with a kVerifyError naming
// the op, its location and the spec constraint; valid ops (including dynamic dims, quantized
// types and unknown ops) must be accepted.
#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "ir_test_helpers.h"

namespace wf {
namespace {

using irtest::addBlockRegion;
using irtest::addFunction;
using irtest::BlockBuilder;
using irtest::entry;
using irtest::i64s;
using irtest::intList;
using irtest::t;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kI1 = ElementType::kI1;
constexpr ElementType kI32 = ElementType::kSI32;
constexpr ElementType kI64 = ElementType::kSI64;

// One function whose body the test fills; `finish` adds the func.return of `results`.
struct Fixture {
  Module module;
  Operation* fn = nullptr;
  Block* body = nullptr;
  std::unique_ptr<BlockBuilder> b;

  explicit Fixture(std::vector<Type> args) {
    fn = addFunction(module, "main", std::move(args), {});
    body = entry(fn);
    b = std::make_unique<BlockBuilder>(body);
  }
  Value* arg(size_t i) const { return body->argument(i); }
  // Makes the function return `values` (its function_type follows them).
  void finish(std::vector<Value*> values) {
    std::vector<Type> inputs;
    for (const auto& a : body->arguments()) inputs.push_back(a->type());
    std::vector<Type> results;
    for (Value* v : values) results.push_back(v->type());
    fn->setAttr("function_type", Attribute::functionType(FunctionType{inputs, results}));
    auto ret = std::make_unique<Operation>("func.return", Location{"test.mlir", 999, 5, ""});
    for (Value* v : values) ret->addOperand(v);
    body->append(std::move(ret));
  }
};

void expectRejected(const Status& s, const std::string& opName, int line, const std::string& constraint) {
  ASSERT_FALSE(s.isOk()) << "expected " << opName << " to be rejected (" << constraint << ")";
  EXPECT_EQ(s.code(), StatusCode::kVerifyError) << s.toString();
  EXPECT_NE(s.message().find("'" + opName + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("test.mlir:" + std::to_string(line) + ":5"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(constraint + ":"), std::string::npos) << s.message();
}

// Builds `op` with one result in a fresh function and verifies the module.
struct OneOp {
  Fixture f;
  Operation* op = nullptr;
  int line = 0;
  OneOp(std::vector<Type> args, const std::string& name, std::vector<size_t> operandArgs, std::vector<Type> results,
        std::vector<NamedAttribute> attrs = {})
      : f(std::move(args)) {
    std::vector<Value*> operands;
    for (size_t i : operandArgs) operands.push_back(f.arg(i));
    op = f.b->op(name, operands, std::move(results), std::move(attrs));
    line = f.b->lastLine();
    std::vector<Value*> rets;
    for (const auto& r : op->results()) rets.push_back(r.get());
    f.finish(rets);
  }
  Status verify() const { return verifyModule(f.module); }
};

Attribute dotDims(std::vector<int64_t> lb, std::vector<int64_t> rb, std::vector<int64_t> lc, std::vector<int64_t> rc) {
  return Attribute::dialectStruct("stablehlo.dot", {{"lhs_batching_dimensions", intList(lb)},
                                                    {"rhs_batching_dimensions", intList(rb)},
                                                    {"lhs_contracting_dimensions", intList(lc)},
                                                    {"rhs_contracting_dimensions", intList(rc)}});
}

Attribute convDims() {  // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
  return Attribute::dialectStruct("stablehlo.conv", {{"input_batch_dimension", Attribute::integer(0)},
                                                     {"input_feature_dimension", Attribute::integer(3)},
                                                     {"input_spatial_dimensions", intList({1, 2})},
                                                     {"kernel_input_feature_dimension", Attribute::integer(2)},
                                                     {"kernel_output_feature_dimension", Attribute::integer(3)},
                                                     {"kernel_spatial_dimensions", intList({0, 1})},
                                                     {"output_batch_dimension", Attribute::integer(0)},
                                                     {"output_feature_dimension", Attribute::integer(3)},
                                                     {"output_spatial_dimensions", intList({1, 2})}});
}

std::vector<NamedAttribute> convAttrs(int64_t featureGroups = 1) {
  return {{"dimension_numbers", convDims()},
          {"window_strides", i64s({4, 4})},
          {"lhs_dilation", i64s({2, 2})},
          {"feature_group_count", Attribute::integer(featureGroups)},
          {"batch_group_count", Attribute::integer(1)}};
}

Attribute gatherDims() {  // the spec's gather example
  return Attribute::dialectStruct("stablehlo.gather", {{"offset_dims", intList({3, 4})},
                                                       {"collapsed_slice_dims", intList({1})},
                                                       {"operand_batching_dims", intList({0})},
                                                       {"start_indices_batching_dims", intList({1})},
                                                       {"start_index_map", intList({2, 1})},
                                                       {"index_vector_dim", Attribute::integer(3)}});
}

// ---------------------------------------------------------------------------------------------
// Negative cases.

TEST(VerifierRejects, ElementwiseTypeMismatch) {
  OneOp o({t({2}), t({3})}, "stablehlo.add", {0, 1}, {t({2})});
  expectRejected(o.verify(), "stablehlo.add", o.line, "C1");
}

TEST(VerifierRejects, ElementwiseOperandCount) {
  OneOp o({t({2})}, "stablehlo.multiply", {0}, {t({2})});
  expectRejected(o.verify(), "stablehlo.multiply", o.line, "operands");
}

TEST(VerifierRejects, UnaryElementTypeChange) {
  OneOp o({t({2})}, "stablehlo.exponential", {0}, {t({2}, ElementType::kF64)});
  expectRejected(o.verify(), "stablehlo.exponential", o.line, "C1");
}

TEST(VerifierRejects, AbsOfComplexKeepsComplex) {
  OneOp o({t({2}, ElementType::kComplexF32)}, "stablehlo.abs", {0}, {t({2}, ElementType::kComplexF32)});
  expectRejected(o.verify(), "stablehlo.abs", o.line, "C2");
}

TEST(VerifierRejects, BroadcastInDimSizeMismatch) {
  OneOp o({t({2, 3})}, "stablehlo.broadcast_in_dim", {0}, {t({4, 2, 3})}, {{"broadcast_dimensions", i64s({1})}});
  expectRejected(o.verify(), "stablehlo.broadcast_in_dim", o.line, "C2");
}

TEST(VerifierRejects, BroadcastInDimOutOfRange) {
  OneOp o({t({3})}, "stablehlo.broadcast_in_dim", {0}, {t({2, 3})}, {{"broadcast_dimensions", i64s({2})}});
  expectRejected(o.verify(), "stablehlo.broadcast_in_dim", o.line, "C3");
}

TEST(VerifierRejects, BroadcastInDimDuplicate) {
  OneOp o({t({1, 1})}, "stablehlo.broadcast_in_dim", {0}, {t({2, 3})}, {{"broadcast_dimensions", i64s({1, 1})}});
  expectRejected(o.verify(), "stablehlo.broadcast_in_dim", o.line, "C4");
}

TEST(VerifierRejects, BroadcastInDimIncompatibleDim) {
  OneOp o({t({2})}, "stablehlo.broadcast_in_dim", {0}, {t({3, 4})}, {{"broadcast_dimensions", i64s({1})}});
  expectRejected(o.verify(), "stablehlo.broadcast_in_dim", o.line, "C5");
}

TEST(VerifierRejects, ReshapeElementCount) {
  OneOp o({t({2, 3})}, "stablehlo.reshape", {0}, {t({5})});
  expectRejected(o.verify(), "stablehlo.reshape", o.line, "C2");
}

TEST(VerifierRejects, TransposeNotAPermutation) {
  OneOp o({t({2, 3})}, "stablehlo.transpose", {0}, {t({3, 2})}, {{"permutation", i64s({0, 0})}});
  expectRejected(o.verify(), "stablehlo.transpose", o.line, "C2");
}

TEST(VerifierRejects, TransposeResultShape) {
  OneOp o({t({2, 3})}, "stablehlo.transpose", {0}, {t({2, 3})}, {{"permutation", i64s({1, 0})}});
  expectRejected(o.verify(), "stablehlo.transpose", o.line, "C3");
}

TEST(VerifierRejects, SliceOutOfBounds) {
  OneOp o({t({4})}, "stablehlo.slice", {0}, {t({3})},
          {{"start_indices", i64s({2})}, {"limit_indices", i64s({5})}, {"strides", i64s({1})}});
  expectRejected(o.verify(), "stablehlo.slice", o.line, "C3");
}

TEST(VerifierRejects, SliceResultShape) {
  OneOp o({t({10})}, "stablehlo.slice", {0}, {t({4})},
          {{"start_indices", i64s({1})}, {"limit_indices", i64s({8})}, {"strides", i64s({3})}});
  expectRejected(o.verify(), "stablehlo.slice", o.line, "C5");  // ceil(7 / 3) = 3
}

TEST(VerifierRejects, ConcatenateMismatchedDims) {
  OneOp o({t({2, 3}), t({2, 4})}, "stablehlo.concatenate", {0, 1}, {t({4, 3})}, {{"dimension", Attribute::integer(0)}});
  expectRejected(o.verify(), "stablehlo.concatenate", o.line, "C2");
}

TEST(VerifierRejects, ConcatenateResultShape) {
  OneOp o({t({2, 3}), t({1, 3})}, "stablehlo.concatenate", {0, 1}, {t({4, 3})}, {{"dimension", Attribute::integer(0)}});
  expectRejected(o.verify(), "stablehlo.concatenate", o.line, "C6");
}

TEST(VerifierRejects, PadResultShape) {
  // low 1 + size 3 + interior (3 - 1) * 1 + high 2 = 8, not 9.
  OneOp o({t({3}), t({})}, "stablehlo.pad", {0, 1}, {t({9})},
          {{"edge_padding_low", i64s({1})}, {"edge_padding_high", i64s({2})}, {"interior_padding", i64s({1})}});
  expectRejected(o.verify(), "stablehlo.pad", o.line, "C4");
}

TEST(VerifierRejects, DotGeneralContractingSizes) {
  OneOp o({t({2, 3}), t({4, 5})}, "stablehlo.dot_general", {0, 1}, {t({2, 5})},
          {{"dot_dimension_numbers", dotDims({}, {}, {1}, {0})}});
  expectRejected(o.verify(), "stablehlo.dot_general", o.line, "C10");
}

TEST(VerifierRejects, DotGeneralResultShape) {
  OneOp o({t({7, 2, 3}), t({7, 3, 5})}, "stablehlo.dot_general", {0, 1}, {t({2, 5})},
          {{"dot_dimension_numbers", dotDims({0}, {0}, {2}, {1})}});
  expectRejected(o.verify(), "stablehlo.dot_general", o.line, "C12");
}

TEST(VerifierRejects, ConvolutionResultShape) {
  OneOp o({t({1, 4, 4, 1}), t({3, 3, 1, 1})}, "stablehlo.convolution", {0, 1}, {t({1, 3, 3, 1})}, convAttrs());
  expectRejected(o.verify(), "stablehlo.convolution", o.line, "C25");
}

TEST(VerifierRejects, ConvolutionKernelFeatures) {
  OneOp o({t({1, 4, 4, 2}), t({3, 3, 1, 1})}, "stablehlo.convolution", {0, 1}, {t({1, 2, 2, 1})}, convAttrs());
  expectRejected(o.verify(), "stablehlo.convolution", o.line, "C14");
}

TEST(VerifierRejects, CompareShapes) {
  OneOp o({t({2}), t({2})}, "stablehlo.compare", {0, 1}, {t({3}, kI1)},
          {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", "EQ")}});
  expectRejected(o.verify(), "stablehlo.compare", o.line, "C2");
}

TEST(VerifierRejects, SelectPredShape) {
  OneOp o({t({3}, kI1), t({2}), t({2})}, "stablehlo.select", {0, 1, 2}, {t({2})});
  expectRejected(o.verify(), "stablehlo.select", o.line, "C1");
}

TEST(VerifierRejects, ConvertShape) {
  OneOp o({t({2})}, "stablehlo.convert", {0}, {t({3}, kI32)});
  expectRejected(o.verify(), "stablehlo.convert", o.line, "C1");
}

TEST(VerifierRejects, IotaDimension) {
  OneOp o({}, "stablehlo.iota", {}, {t({4})}, {{"iota_dimension", Attribute::integer(1)}});
  expectRejected(o.verify(), "stablehlo.iota", o.line, "C1");
}

TEST(VerifierRejects, ConstantValueType) {
  Literal v = Literal::zeros(t({2}));
  OneOp o({}, "stablehlo.constant", {}, {t({3})}, {{"value", Attribute::denseElements(v)}});
  expectRejected(o.verify(), "stablehlo.constant", o.line, "C1");
}

TEST(VerifierRejects, DynamicSliceResult) {
  OneOp o({t({5}), t({}, kI64)}, "stablehlo.dynamic_slice", {0, 1}, {t({3})}, {{"slice_sizes", i64s({2})}});
  expectRejected(o.verify(), "stablehlo.dynamic_slice", o.line, "C5");
}

TEST(VerifierRejects, GatherResultShape) {
  OneOp o({t({2, 3, 4, 2}, kI64), t({2, 2, 3, 2}, kI64)}, "stablehlo.gather", {0, 1}, {t({2, 2, 3, 2, 3}, kI64)},
          {{"dimension_numbers", gatherDims()}, {"slice_sizes", i64s({1, 1, 2, 2})}});
  expectRejected(o.verify(), "stablehlo.gather", o.line, "C22");
}

TEST(VerifierRejects, GetTupleElementIndex) {
  OneOp o({Type::tuple({t({}), t({2})})}, "stablehlo.get_tuple_element", {0}, {t({})},
          {{"index", Attribute::integer(2, kI32)}});
  expectRejected(o.verify(), "stablehlo.get_tuple_element", o.line, "C1");
}

TEST(VerifierRejects, ReduceDimensionsOutOfRange) {
  Fixture f({t({4, 5}), t({})});
  Operation* r = f.b->op("stablehlo.reduce", {f.arg(0), f.arg(1)}, {t({4})}, {{"dimensions", i64s({2})}});
  int line = f.b->lastLine();
  Block* body = addBlockRegion(r, {t({}), t({})});
  BlockBuilder bb(body);
  bb.op("stablehlo.return", {bb.value("stablehlo.add", {body->argument(0), body->argument(1)}, t({}))}, {});
  f.finish({r->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.reduce", line, "C4");
}

TEST(VerifierRejects, ReduceBodySignature) {
  Fixture f({t({4, 5}), t({})});
  Operation* r = f.b->op("stablehlo.reduce", {f.arg(0), f.arg(1)}, {t({4})}, {{"dimensions", i64s({1})}});
  int line = f.b->lastLine();
  Block* body = addBlockRegion(r, {t({})});
  BlockBuilder bb(body);
  bb.op("stablehlo.return", {body->argument(0)}, {});
  f.finish({r->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.reduce", line, "C6");
}

TEST(VerifierRejects, ReduceResultShape) {
  Fixture f({t({4, 5}), t({})});
  Operation* r = f.b->op("stablehlo.reduce", {f.arg(0), f.arg(1)}, {t({5})}, {{"dimensions", i64s({1})}});
  int line = f.b->lastLine();
  Block* body = addBlockRegion(r, {t({}), t({})});
  BlockBuilder bb(body);
  bb.op("stablehlo.return", {bb.value("stablehlo.add", {body->argument(0), body->argument(1)}, t({}))}, {});
  f.finish({r->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.reduce", line, "C7");
}

TEST(VerifierRejects, SortComparator) {
  Fixture f({t({4})});
  Operation* s = f.b->op("stablehlo.sort", {f.arg(0)}, {t({4})}, {{"dimension", Attribute::integer(0)}});
  int line = f.b->lastLine();
  Block* cmp = addBlockRegion(s, {t({}), t({})});
  BlockBuilder bb(cmp);
  bb.op("stablehlo.return", {cmp->argument(0)}, {});  // returns f32, not i1
  f.finish({s->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.sort", line, "C5");
}

TEST(VerifierRejects, WhileBodyTypes) {
  Fixture f({t({}, kI64)});
  Operation* w = f.b->op("stablehlo.while", {f.arg(0)}, {t({}, kI64)});
  int line = f.b->lastLine();
  Block* cond = addBlockRegion(w, {t({}, kI64)});
  BlockBuilder c(cond);
  c.op("stablehlo.return", {c.value("stablehlo.compare", {cond->argument(0), cond->argument(0)}, t({}, kI1),
                                    {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", "LT")}})},
       {});
  Block* body = addBlockRegion(w, {t({}, kI64)});
  BlockBuilder bb(body);
  bb.op("stablehlo.return", {bb.value("stablehlo.convert", {body->argument(0)}, t({}, kI32))}, {});
  f.finish({w->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.while", line, "C2");
}

TEST(VerifierRejects, IfBranchTypes) {
  Fixture f({t({}, kI1), t({2}), t({3})});
  Operation* op = f.b->op("stablehlo.if", {f.arg(0)}, {t({2})});
  int line = f.b->lastLine();
  BlockBuilder tb(addBlockRegion(op, {}));
  tb.op("stablehlo.return", {f.arg(1)}, {});
  BlockBuilder fb(addBlockRegion(op, {}));
  fb.op("stablehlo.return", {f.arg(2)}, {});
  f.finish({op->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.if", line, "C2");
}

TEST(VerifierRejects, FuncReturnTypes) {
  Fixture f({t({2})});
  f.finish({f.arg(0)});
  f.fn->setAttr("function_type", Attribute::functionType(FunctionType{{t({2})}, {t({3})}}));
  expectRejected(verifyModule(f.module), "func.return", 999, "func");
}

TEST(VerifierRejects, CallSignature) {
  Fixture f({t({2})});
  Operation* callee = addFunction(f.module, "callee", {t({3})}, {t({3})});
  BlockBuilder cb(entry(callee));
  cb.op("func.return", {entry(callee)->argument(0)}, {});
  Operation* call = f.b->op("func.call", {f.arg(0)}, {t({3})}, {{"callee", Attribute::symbolRef("callee")}});
  int line = f.b->lastLine();
  f.finish({call->result(0)});
  expectRejected(verifyModule(f.module), "func.call", line, "call");
}

TEST(VerifierRejects, CallUnknownCallee) {
  Fixture f({t({2})});
  Operation* call = f.b->op("func.call", {f.arg(0)}, {t({2})}, {{"callee", Attribute::symbolRef("nowhere")}});
  int line = f.b->lastLine();
  f.finish({call->result(0)});
  Status s = verifyModule(f.module);
  expectRejected(s, "func.call", line, "call");
  EXPECT_NE(s.message().find("@nowhere"), std::string::npos);
}

TEST(VerifierRejects, UseBeforeDefinition) {
  Fixture f({t({2})});
  Operation* neg = f.b->op("stablehlo.negate", {f.arg(0)}, {t({2})});
  Operation* abs = f.b->op("stablehlo.abs", {f.arg(0)}, {t({2})});
  neg->setOperand(0, abs->result(0));  // %0 = negate(%1); %1 = abs(%arg0)
  f.finish({neg->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.negate", f.b->lastLine() - 1, "SSA");
}

TEST(VerifierRejects, ValueFromAnotherRegion) {
  Fixture f({t({}, kI1), t({2})});
  Operation* op = f.b->op("stablehlo.if", {f.arg(0)}, {t({2})});
  BlockBuilder tb(addBlockRegion(op, {}));
  Value* inner = tb.value("stablehlo.negate", {f.arg(1)}, t({2}));
  tb.op("stablehlo.return", {inner}, {});
  BlockBuilder fb(addBlockRegion(op, {}));
  fb.op("stablehlo.return", {inner}, {});  // the true branch's value is not visible here
  int line = fb.lastLine();
  f.finish({op->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.return", line, "SSA");
}

TEST(VerifierRejects, NestedOpErrorsAreFound) {
  Fixture f({t({4}), t({})});
  Operation* r = f.b->op("stablehlo.reduce", {f.arg(0), f.arg(1)}, {t({})}, {{"dimensions", i64s({0})}});
  Block* body = addBlockRegion(r, {t({}), t({})});
  BlockBuilder bb(body);
  // An unused op with a wrong result type: the reduce's own signature stays valid.
  bb.value("stablehlo.add", {body->argument(0), body->argument(1)}, t({}, ElementType::kF64));
  int line = bb.lastLine();
  bb.op("stablehlo.return", {bb.value("stablehlo.add", {body->argument(0), body->argument(1)}, t({}))}, {});
  f.finish({r->result(0)});
  expectRejected(verifyModule(f.module), "stablehlo.add", line, "C1");
}

// ---------------------------------------------------------------------------------------------
// Positive cases.

TEST(VerifierAccepts, PadWithInteriorPadding) {
  // low 1 + size 3 + interior (3 - 1) * 1 + high 2 = 8.
  OneOp o({t({3}), t({})}, "stablehlo.pad", {0, 1}, {t({8})},
          {{"edge_padding_low", i64s({1})}, {"edge_padding_high", i64s({2})}, {"interior_padding", i64s({1})}});
  EXPECT_TRUE(o.verify().isOk()) << o.verify().message();
}

TEST(VerifierAccepts, DynamicDimsAreCompatible) {
  OneOp add({t({kDynamic, 3}), t({2, 3})}, "stablehlo.add", {0, 1}, {t({2, kDynamic})});
  EXPECT_TRUE(add.verify().isOk()) << add.verify().message();
  OneOp bcast({t({kDynamic})}, "stablehlo.broadcast_in_dim", {0}, {t({2, 5})}, {{"broadcast_dimensions", i64s({1})}});
  EXPECT_TRUE(bcast.verify().isOk()) << bcast.verify().message();
  OneOp reshape({t({kDynamic, 4})}, "stablehlo.reshape", {0}, {t({7})});
  EXPECT_TRUE(reshape.verify().isOk()) << reshape.verify().message();
}

TEST(VerifierAccepts, QuantizedAndUnknownOpsAreSkipped) {
  Type q = t({2});
  q = q.withElementType(ElementType::kQuantized);
  q.setQuantizedSpelling("!quant.uniform<i8:f32, 0.1>");
  OneOp quant({t({2})}, "stablehlo.uniform_quantize", {0}, {q});
  EXPECT_TRUE(quant.verify().isOk()) << quant.verify().message();
  OneOp add({q, q}, "stablehlo.add", {0, 1}, {t({2}, ElementType::kQuantized)});
  EXPECT_TRUE(add.verify().isOk()) << add.verify().message();
  OneOp unknown({t({2})}, "mydialect.frobnicate", {0}, {t({7, 7})});
  EXPECT_TRUE(unknown.verify().isOk()) << unknown.verify().message();
}

TEST(VerifierAccepts, SpecExamples) {
  OneOp conv({t({1, 4, 4, 1}), t({3, 3, 1, 1})}, "stablehlo.convolution", {0, 1}, {t({1, 2, 2, 1})}, convAttrs());
  EXPECT_TRUE(conv.verify().isOk()) << conv.verify().message();
  OneOp gather({t({2, 3, 4, 2}, kI64), t({2, 2, 3, 2}, kI64)}, "stablehlo.gather", {0, 1}, {t({2, 2, 3, 2, 2}, kI64)},
               {{"dimension_numbers", gatherDims()}, {"slice_sizes", i64s({1, 1, 2, 2})}});
  EXPECT_TRUE(gather.verify().isOk()) << gather.verify().message();
  OneOp dot({t({7, 2, 3}), t({7, 3, 5})}, "stablehlo.dot_general", {0, 1}, {t({7, 2, 5})},
            {{"dot_dimension_numbers", dotDims({0}, {0}, {2}, {1})}});
  EXPECT_TRUE(dot.verify().isOk()) << dot.verify().message();
  OneOp slice({t({10})}, "stablehlo.slice", {0}, {t({3})},
              {{"start_indices", i64s({1})}, {"limit_indices", i64s({8})}, {"strides", i64s({3})}});
  EXPECT_TRUE(slice.verify().isOk()) << slice.verify().message();
  OneOp concat({t({2, 3}), t({1, 3})}, "stablehlo.concatenate", {0, 1}, {t({3, 3})}, {{"dimension", Attribute::integer(0)}});
  EXPECT_TRUE(concat.verify().isOk()) << concat.verify().message();
}

TEST(VerifierAccepts, ControlFlowWithEnclosingValues) {
  Fixture f({t({}, kI64), t({}, kI64)});
  Operation* w = f.b->op("stablehlo.while", {f.arg(0)}, {t({}, kI64)});
  Block* cond = addBlockRegion(w, {t({}, kI64)});
  BlockBuilder c(cond);
  c.op("stablehlo.return", {c.value("stablehlo.compare", {cond->argument(0), f.arg(1)}, t({}, kI1),
                                    {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", "LT")}})},
       {});
  Block* body = addBlockRegion(w, {t({}, kI64)});
  BlockBuilder bb(body);
  bb.op("stablehlo.return", {bb.value("stablehlo.add", {body->argument(0), f.arg(1)}, t({}, kI64))}, {});
  f.finish({w->result(0)});
  Status s = verifyModule(f.module);
  EXPECT_TRUE(s.isOk()) << s.message();
  // verifyOperation on the lone while op also passes (its operands come from outside).
  EXPECT_TRUE(verifyOperation(*w).isOk());
}

}  // namespace
}  // namespace wf
