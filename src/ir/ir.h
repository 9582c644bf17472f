// The IR: modules, operations, regions, blocks and SSA values, shaped after MLIR.
// func.func is an Operation with one region; a Module owns its top-level ops.
// Ownership is strict (unique_ptr down the tree); Values and Ops have stable addresses, so
// passes and backends refer to them by pointer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"
#include "ir/types.h"

namespace wf {

enum class OpCode : uint16_t {
#define X(e, name) e,
#include "ir/ops.def"
#undef X
  kUnknown,  // an op of a dialect WarpForge does not know: parsed and printed, never run
};
inline constexpr int kNumOpCodes = static_cast<int>(OpCode::kUnknown);

std::string_view opCodeName(OpCode code);
OpCode opCodeFromName(std::string_view name);  // kUnknown if not in ops.def

// Where an op came from: the position in the parsed text, plus the `loc(...)` it carried.
struct Location {
  std::string file;  // as given to the parser
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
  std::string source;  // resolved `loc("file":l:c)` text if any, verbatim
  std::string toString() const;  // "file:line:col"
};

class Operation;
class Block;
class Region;

class Value {
 public:
  Value(Type type, Operation* definingOp, Block* ownerBlock, int index)
      : type_(std::move(type)), definingOp_(definingOp), ownerBlock_(ownerBlock), index_(index) {}
  const Type& type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  // Exactly one of these is set: op results have a defining op, block arguments an owner block.
  Operation* definingOp() const { return definingOp_; }
  Block* ownerBlock() const { return ownerBlock_; }
  bool isBlockArgument() const { return ownerBlock_ != nullptr; }
  int index() const { return index_; }  // result number or argument number
  // The name the source text used ("%arg0", "%3"); purely cosmetic.
  const std::string& nameHint() const { return nameHint_; }
  void setNameHint(std::string n) { nameHint_ = std::move(n); }

 private:
  Type type_;
  Operation* definingOp_;
  Block* ownerBlock_;
  int index_;
  std::string nameHint_;
};

class Block {
 public:
  explicit Block(Region* parent = nullptr) : parent_(parent) {}
  Region* parent() const { return parent_; }
  void setParent(Region* r) { parent_ = r; }

  Value* addArgument(Type type);
  const std::vector<std::unique_ptr<Value>>& arguments() const { return arguments_; }
  Value* argument(size_t i) const { return arguments_[i].get(); }
  size_t numArguments() const { return arguments_.size(); }

  Operation* append(std::unique_ptr<Operation> op);
  const std::vector<std::unique_ptr<Operation>>& operations() const { return ops_; }
  std::vector<std::unique_ptr<Operation>>& mutableOperations() { return ops_; }
  Operation* terminator() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  // Label as written in the source ("^bb0"); cosmetic.
  std::string label;

 private:
  Region* parent_;
  std::vector<std::unique_ptr<Value>> arguments_;
  std::vector<std::unique_ptr<Operation>> ops_;
};

class Region {
 public:
  explicit Region(Operation* parent = nullptr) : parent_(parent) {}
  Operation* parent() const { return parent_; }
  void setParent(Operation* op) { parent_ = op; }
  Block* addBlock();
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }
  bool empty() const { return blocks_.empty(); }
  Block& front() const { return *blocks_.front(); }

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

class Operation {
 public:
  // `name` is the full op name ("stablehlo.add"); the OpCode is derived from it.
  Operation(std::string name, Location loc);
  ~Operation();

  const std::string& name() const { return name_; }
  OpCode code() const { return code_; }
  const Location& location() const { return loc_; }
  void setLocation(Location loc) { loc_ = std::move(loc); }
  Block* parentBlock() const { return parent_; }
  void setParentBlock(Block* b) { parent_ = b; }
  // The op whose region holds this op (nullptr at module level).
  Operation* parentOp() const;

  // Operands.
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(size_t i) const { return operands_[i]; }
  size_t numOperands() const { return operands_.size(); }
  void addOperand(Value* v) { operands_.push_back(v); }
  void setOperand(size_t i, Value* v) { operands_[i] = v; }
  void setOperands(std::vector<Value*> v) { operands_ = std::move(v); }

  // Results.
  Value* addResult(Type type);
  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }
  Value* result(size_t i) const { return results_[i].get(); }
  size_t numResults() const { return results_.size(); }

  // Attributes.
  AttributeMap& attributes() { return attributes_; }
  const AttributeMap& attributes() const { return attributes_; }
  const Attribute* attr(std::string_view name) const { return attributes_.get(name); }
  void setAttr(std::string name, Attribute value) { attributes_.set(std::move(name), std::move(value)); }

  // Regions.
  Region* addRegion();
  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }
  Region& region(size_t i) const { return *regions_[i]; }
  size_t numRegions() const { return regions_.size(); }

  // "stablehlo.add" at file:3:8
  std::string describe() const;

 private:
  std::string name_;
  OpCode code_;
  Location loc_;
  Block* parent_ = nullptr;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttributeMap attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
};

// A read-only view of a func.func op.
class FuncOp {
 public:
  explicit FuncOp(const Operation* op) : op_(op) {}
  const Operation* op() const { return op_; }
  std::string_view symName() const;
  FunctionType functionType() const;  // from the `function_type` attribute
  bool isPublic() const;              // no sym_visibility = "private"
  Block& body() const { return op_->region(0).front(); }

 private:
  const Operation* op_;
};

// Blobs from a file's `{-# dialect_resources: { builtin: { key: "0x..." } } #-}` section.
struct ResourceBlob {
  uint32_t alignment = 0;
  std::vector<uint8_t> bytes;  // without the 4-byte alignment prefix
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  // `module @name attributes {...} { ... }`; name and attributes are optional.
  std::string name;
  AttributeMap attributes;
  std::string sourceFile;

  Operation* append(std::unique_ptr<Operation> op);
  const std::vector<std::unique_ptr<Operation>>& operations() const { return ops_; }
  std::vector<std::unique_ptr<Operation>>& mutableOperations() { return ops_; }

  // func.func ops in order, and lookup by symbol name.
  std::vector<FuncOp> functions() const;
  const Operation* lookupFunction(std::string_view symName) const;
  Operation* lookupFunction(std::string_view symName);

  // dense_resource blobs by key (also resolved into the attributes that name them).
  std::map<std::string, ResourceBlob> resources;

 private:
  std::vector<std::unique_ptr<Operation>> ops_;
};

// The op defining `v` where it is a `code` op, else nullptr.
inline Operation* definedBy(const Value* v, OpCode code) {
  Operation* op = v->definingOp();
  return op && op->code() == code ? op : nullptr;
}

}  // namespace wf
