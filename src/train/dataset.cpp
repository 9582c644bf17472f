#include "train/dataset.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "runtime/file_io.h"
#include "runtime/safetensors.h"

namespace wf::train {

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // as the safetensors reader

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

// The safetensors dtype names, and the element type each reads as.
bool dtypeFromName(const std::string& name, ElementType* out) {
  static const ElementType kTypes[] = {
      ElementType::kI1,   ElementType::kUI8,  ElementType::kSI8,     ElementType::kUI16,
      ElementType::kSI16, ElementType::kUI32, ElementType::kSI32,    ElementType::kUI64,
      ElementType::kSI64, ElementType::kF16,  ElementType::kBF16,    ElementType::kF32,
      ElementType::kF64,  ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kComplexF32};
  for (ElementType t : kTypes) {
    auto n = safetensorsDtypeFor(t);
    if (n && *n == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::string dtypeText(ElementType t) {
  auto n = safetensorsDtypeFor(t);
  std::string mlir(elementTypeName(t));
  return n ? *n + " (" + mlir + ")" : mlir;
}

// Reads element `i` of an integer or bool tensor whose bytes start at `p`.
int64_t readInt(const std::byte* p, ElementType t, size_t i, bool* tooLarge) {
  *tooLarge = false;
  switch (t) {
    case ElementType::kI1:
    case ElementType::kUI8: return static_cast<int64_t>(reinterpret_cast<const uint8_t*>(p)[i]);
    case ElementType::kSI8: return static_cast<int64_t>(reinterpret_cast<const int8_t*>(p)[i]);
    default: break;
  }
  const size_t w = static_cast<size_t>(storageBytes(t));
  const std::byte* e = p + i * w;
  switch (t) {
    case ElementType::kUI16: { uint16_t v; std::memcpy(&v, e, 2); return v; }
    case ElementType::kSI16: { int16_t v; std::memcpy(&v, e, 2); return v; }
    case ElementType::kUI32: { uint32_t v; std::memcpy(&v, e, 4); return v; }
    case ElementType::kSI32: { int32_t v; std::memcpy(&v, e, 4); return v; }
    case ElementType::kSI64: { int64_t v; std::memcpy(&v, e, 8); return v; }
    case ElementType::kUI64: {
      uint64_t v;
      std::memcpy(&v, e, 8);
      if (v > static_cast<uint64_t>(INT64_MAX)) *tooLarge = true;
      return static_cast<int64_t>(v);
    }
    default: return 0;
  }
}

}  // namespace

Expected<BatchArgument> BatchArgument::fromProgramArgument(std::string name, ElementType dtype,
                                                           const std::vector<int64_t>& programShape) {
  if (programShape.empty())
    return invalidArgument("batch argument '" + name + "' is a scalar: a batch argument needs a batch dimension");
  return BatchArgument{std::move(name), dtype, std::vector<int64_t>(programShape.begin() + 1, programShape.end())};
}

Expected<Dataset> Dataset::open(const std::string& path) {
  WF_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(path));
  return fromBytes(std::move(bytes), path);
}

Expected<Dataset> Dataset::fromBytes(std::string bytesIn, std::string name) {
  Dataset d;
  d.path_ = std::move(name);
  const std::string& file = d.path_;
  auto bytes = std::make_shared<const std::string>(std::move(bytesIn));
  const auto* u = reinterpret_cast<const uint8_t*>(bytes->data());
  if (bytes->size() < 8) return invalidArgument(file + ": not a safetensors file (shorter than 8 bytes)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i) headerLen = (headerLen << 8) | u[i];
  if (headerLen > kMaxHeaderBytes || headerLen > bytes->size() - 8)
    return invalidArgument(file + ": not a safetensors file (header length " + std::to_string(headerLen) +
                           " for a file of " + std::to_string(bytes->size()) + " bytes)");
  json header = json::parse(std::string_view(bytes->data() + 8, headerLen), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return invalidArgument(file + ": the safetensors header is not a JSON object");
  d.dataStart_ = 8 + headerLen;
  const uint64_t dataSize = bytes->size() - d.dataStart_;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const json& entry = it.value();
    if (it.key() == "__metadata__") {
      if (!entry.is_object()) return invalidArgument(file + ": __metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m)
        if (m.value().is_string()) d.metadata_[m.key()] = m.value().get<std::string>();
      continue;
    }
    const std::string where = file + ": tensor '" + it.key() + "'";
    if (it.key().empty()) return invalidArgument(file + ": a tensor has an empty name");
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      return invalidArgument(where + ": the header entry needs a string dtype, a shape and two data_offsets");
    DatasetTensor t;
    t.name = it.key();
    const std::string dtype = entry["dtype"].get<std::string>();
    if (!dtypeFromName(dtype, &t.dtype)) return invalidArgument(where + ": unsupported dtype '" + dtype + "'");
    uint64_t count = 1;
    for (const json& dim : entry["shape"]) {
      if (!dim.is_number_unsigned()) return invalidArgument(where + ": shape entries must be non-negative integers");
      const uint64_t v = dim.get<uint64_t>();
      if (v != 0 && count > (uint64_t{1} << 48) / v) return invalidArgument(where + ": shape is too large");
      count *= v;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    const json& b = entry["data_offsets"][0];
    const json& e = entry["data_offsets"][1];
    if (!b.is_number_unsigned() || !e.is_number_unsigned())
      return invalidArgument(where + ": data_offsets must be non-negative integers");
    const uint64_t begin = b.get<uint64_t>(), end = e.get<uint64_t>();
    const uint64_t need = count * static_cast<uint64_t>(storageBytes(t.dtype));
    if (begin > end || end > dataSize || end - begin != need)
      return invalidArgument(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                             ") do not hold the " + std::to_string(need) + " bytes of a " + dtype + " " +
                             shapeText(t.shape) + " tensor inside the " + std::to_string(dataSize) +
                             "-byte data buffer");
    if (t.shape.empty())
      return invalidArgument(where + ": is a scalar; every tensor of a features file has the example index as its first dimension");
    t.offset = d.dataStart_ + begin;
    t.exampleBytes = t.shape[0] == 0 ? 0 : static_cast<size_t>(need / static_cast<uint64_t>(t.shape[0]));
    if (t.dtype == ElementType::kI1) {
      for (uint64_t i = 0; i < count; ++i)
        if (u[t.offset + i] > 1)
          return invalidArgument(where + ": BOOL value " + std::to_string(u[t.offset + i]) + " at element " + std::to_string(i));
    }
    d.tensors_.push_back(std::move(t));
  }
  if (d.tensors_.empty()) return invalidArgument(file + ": holds no tensors");

  // File order (by data offset); the data buffer must be covered exactly, as safetensors requires.
  std::stable_sort(d.tensors_.begin(), d.tensors_.end(),
                   [](const DatasetTensor& a, const DatasetTensor& b) { return a.offset < b.offset; });
  size_t cursor = d.dataStart_;
  for (const DatasetTensor& t : d.tensors_) {
    if (t.offset != cursor)
      return invalidArgument(file + ": tensor '" + t.name + "' " + (t.offset < cursor ? "overlaps the previous tensor's data" : "leaves a hole in the data buffer before it"));
    cursor = t.offset + t.exampleBytes * static_cast<size_t>(t.shape[0]);
  }
  if (cursor != bytes->size())
    return invalidArgument(file + ": the data buffer has " + std::to_string(bytes->size() - cursor) + " trailing bytes no tensor uses");

  const DatasetTensor& first = d.tensors_.front();
  d.size_ = first.shape[0];
  for (const DatasetTensor& t : d.tensors_)
    if (t.shape[0] != d.size_)
      return invalidArgument(file + ": tensor '" + t.name + "' holds " + std::to_string(t.shape[0]) +
                             " examples (first dimension), tensor '" + first.name + "' " + std::to_string(d.size_) +
                             ": every tensor of a features file has the example index as its first dimension");
  if (d.size_ == 0) return invalidArgument(file + ": holds no examples (every tensor's first dimension is 0)");
  d.bytes_ = std::move(bytes);
  return d;
}

const DatasetTensor* Dataset::find(std::string_view name) const {
  for (const DatasetTensor& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

Expected<size_t> Dataset::lookup(std::string_view name) const {
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].name == name) return i;
  std::string have;
  for (const DatasetTensor& t : tensors_) have += (have.empty() ? "" : ", ") + t.name;
  return notFound(path_ + ": no tensor '" + std::string(name) + "' (the file holds " + have + ")");
}

Status Dataset::bind(std::vector<BatchArgument> arguments) {
  std::vector<size_t> bound;
  for (const BatchArgument& a : arguments) {
    auto found = lookup(a.name);
    if (!found) return found.status().withContext("batch argument '" + a.name + "'");
    const DatasetTensor& t = tensors_[*found];
    const std::string where = path_ + ": tensor '" + t.name + "'";
    if (t.dtype != a.dtype)
      return invalidArgument(where + " is " + dtypeText(t.dtype) + ", the program's batch argument takes " +
                             dtypeText(a.dtype));
    std::vector<int64_t> ex = t.exampleShape();
    bool same = ex.size() == a.exampleShape.size();
    for (size_t i = 0; same && i < ex.size(); ++i) same = a.exampleShape[i] < 0 || a.exampleShape[i] == ex[i];
    if (!same)
      return invalidArgument(where + " holds examples of shape " + shapeText(ex) + ", the program's batch argument " +
                             "takes examples of shape " + shapeText(a.exampleShape) + " (a batch [B, " +
                             shapeText(a.exampleShape).substr(1) + ")");
    bound.push_back(*found);
  }
  arguments_ = std::move(arguments);
  bound_ = std::move(bound);
  return Status::ok();
}

Status Dataset::checkIndices(std::span<const int64_t> indices) const {
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= size_)
      return outOfRange(path_ + ": example index " + std::to_string(indices[i]) + " (position " + std::to_string(i) +
                        " of the batch) is outside [0, " + std::to_string(size_) + ")");
  return Status::ok();
}

void Dataset::copyRows(const DatasetTensor& t, std::span<const int64_t> indices, Literal& out) const {
  auto* dst = reinterpret_cast<std::byte*>(out.data());
  const auto* src = reinterpret_cast<const std::byte*>(bytes_->data()) + t.offset;
  for (size_t i = 0; i < indices.size(); ++i)
    std::memcpy(dst + i * t.exampleBytes, src + static_cast<size_t>(indices[i]) * t.exampleBytes, t.exampleBytes);
}

Expected<std::vector<Literal>> Dataset::batch(std::span<const int64_t> indices) const {
  if (arguments_.empty()) return invalidArgument(path_ + ": no batch arguments bound (Dataset::bind)");
  if (indices.empty()) return invalidArgument(path_ + ": an empty batch");
  WF_RETURN_IF_ERROR(checkIndices(indices));
  std::vector<Literal> out;
  out.reserve(bound_.size());
  for (size_t k : bound_) {
    const DatasetTensor& t = tensors_[k];
    std::vector<int64_t> shape = t.shape;
    shape[0] = static_cast<int64_t>(indices.size());
    Literal l = Literal::uninitialized(Type::tensor(std::move(shape), t.dtype));
    copyRows(t, indices, l);
    out.push_back(std::move(l));
  }
  return out;
}

Expected<Literal> Dataset::gather(std::string_view name, std::span<const int64_t> indices) const {
  WF_ASSIGN_OR_RETURN(size_t k, lookup(name));
  WF_RETURN_IF_ERROR(checkIndices(indices));
  const DatasetTensor& t = tensors_[k];
  std::vector<int64_t> shape = t.shape;
  shape[0] = static_cast<int64_t>(indices.size());
  Literal l = Literal::zeros(Type::tensor(std::move(shape), t.dtype));
  copyRows(t, indices, l);
  return l;
}

Expected<Literal> Dataset::tensor(std::string_view name) const {
  WF_ASSIGN_OR_RETURN(size_t k, lookup(name));
  const DatasetTensor& t = tensors_[k];
  Literal l = Literal::uninitialized(Type::tensor(t.shape, t.dtype));
  std::memcpy(l.data(), bytes_->data() + t.offset, l.sizeBytes());
  return l;
}

Status Dataset::checkRange(std::string_view name, int64_t lo, int64_t hi) const {
  WF_ASSIGN_OR_RETURN(size_t k, lookup(name));
  const DatasetTensor& t = tensors_[k];
  const std::string where = path_ + ": tensor '" + t.name + "'";
  if (!isInteger(t.dtype) && t.dtype != ElementType::kI1)
    return invalidArgument(where + " is " + dtypeText(t.dtype) + ", not an integer tensor: no range check");
  const auto* p = reinterpret_cast<const std::byte*>(bytes_->data()) + t.offset;
  const size_t perExample = static_cast<size_t>(t.exampleBytes / static_cast<size_t>(storageBytes(t.dtype)));
  const size_t count = perExample * static_cast<size_t>(size_);
  for (size_t i = 0; i < count; ++i) {
    bool tooLarge = false;
    const int64_t v = readInt(p, t.dtype, i, &tooLarge);
    if (tooLarge || v < lo || v >= hi) {
      const size_t example = i / perExample;
      std::string at;
      if (t.shape.size() > 1) {
        // the element's position inside the example, row-major
        std::vector<int64_t> ex = t.exampleShape();
        std::vector<int64_t> idx(ex.size());
        size_t rest = i % perExample;
        for (size_t dim = ex.size(); dim-- > 0;) {
          idx[dim] = static_cast<int64_t>(rest % static_cast<size_t>(ex[dim]));
          rest /= static_cast<size_t>(ex[dim]);
        }
        at = " at " + shapeText(idx);
      }
      const std::string value = tooLarge ? "a value above 2^63" : std::to_string(v);
      return outOfRange(where + ": example " + std::to_string(example) + " holds " + value + at + ", outside [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + ")");
    }
  }
  return Status::ok();
}

}  // namespace wf::train
