// A training data file: one safetensors file of prepared features whose every tensor has the
// example index as its first dimension (the same N for all), named after the training program's
// batch arguments (input_ids, start_positions, ...), plus optional extra tensors for metrics
// (example_index, offset_mapping). docs/data.md, "Features files", describes the format;
// `python -m warpforge.data.squad features` writes one.
//
//   auto data = wf::train::Dataset::open("train_features.safetensors");
//   WF_RETURN_IF_ERROR(data->bind({{"input_ids", ElementType::kSI64, {384}}, ...}));
//   WF_RETURN_IF_ERROR(data->checkRange("start_positions", 0, seq));
//   auto batch = data->batch(sampler.batch(epoch, b));   // Literals in argument order
//
// The file is read once and its bytes kept: batches are gathered from them, nothing is copied
// at open. Every error names the file and the tensor (and the example, for a bad value).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"

namespace wf::train {

// One batch argument of a program: its name, element type and the shape of one example (the
// argument's shape [B, ...] without the batch dimension B).
struct BatchArgument {
  std::string name;
  ElementType dtype = ElementType::kSI64;
  std::vector<int64_t> exampleShape;

  // From a program argument of shape [B, ...] (a training package's batch argument, with the
  // dtype and shape its manifest gives); a rank-0 shape has no batch dimension and is refused.
  static Expected<BatchArgument> fromProgramArgument(std::string name, ElementType dtype,
                                                     const std::vector<int64_t>& programShape);
};

struct DatasetTensor {
  std::string name;
  ElementType dtype = ElementType::kSI64;
  std::vector<int64_t> shape;  // [N, ...]
  size_t offset = 0;           // of its bytes in the file
  size_t exampleBytes = 0;     // bytes of one example (row)

  std::vector<int64_t> exampleShape() const { return {shape.begin() + 1, shape.end()}; }
};

class Dataset {
 public:
  // Reads and checks the file: a valid safetensors file (dtypes, shapes, data offsets covering
  // the data exactly, BOOL values 0/1), at least one tensor, every tensor of rank >= 1 with the
  // same first dimension N >= 1.
  static Expected<Dataset> open(const std::string& path);
  // The same from bytes in memory; `name` stands for the file in errors.
  static Expected<Dataset> fromBytes(std::string bytes, std::string name);

  const std::string& path() const { return path_; }
  int64_t size() const { return size_; }  // N, the number of examples
  const std::vector<DatasetTensor>& tensors() const { return tensors_; }  // in file order
  const DatasetTensor* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Selects the tensors batch() returns: each argument must name a tensor of the same element
  // type whose examples have the argument's exampleShape.
  Status bind(std::vector<BatchArgument> arguments);
  const std::vector<BatchArgument>& arguments() const { return arguments_; }

  // The rows `indices` of every bound tensor, in argument order: Literals of shape
  // [indices.size(), exampleShape...]. Every index must lie in [0, size()).
  Expected<std::vector<Literal>> batch(std::span<const int64_t> indices) const;
  // The rows `indices` of any tensor (a bound one or an extra).
  Expected<Literal> gather(std::string_view name, std::span<const int64_t> indices) const;
  // A whole tensor, [N, ...] (a copy of its bytes).
  Expected<Literal> tensor(std::string_view name) const;

  // Checks that every value of the integer (or bool) tensor `name` lies in [lo, hi); the error
  // names the file, the tensor, the first example holding a value outside and the value.
  Status checkRange(std::string_view name, int64_t lo, int64_t hi) const;

 private:
  Dataset() = default;
  Expected<size_t> lookup(std::string_view name) const;
  void copyRows(const DatasetTensor& t, std::span<const int64_t> indices, Literal& out) const;
  Status checkIndices(std::span<const int64_t> indices) const;

  std::string path_;
  std::shared_ptr<const std::string> bytes_;  // the whole file
  size_t dataStart_ = 0;                      // of the data buffer in bytes_
  int64_t size_ = 0;
  std::vector<DatasetTensor> tensors_;
  std::map<std::string, std::string> metadata_;
  std::vector<BatchArgument> arguments_;
  std::vector<size_t> bound_;  // parallel to arguments_: positions in tensors_
};

}  // namespace wf::train
