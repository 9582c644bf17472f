#include "runtime/safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "runtime/file_io.h"
#include "support/phase_timer.h"

namespace wf {
namespace {

using json = nlohmann::json;

// Header size limit, as the reference implementation has, so a corrupt length cannot make us
// allocate gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DtypeEntry {
  const char* name;
  ElementType type;
};
constexpr DtypeEntry kDtypes[] = {
    {"BOOL", ElementType::kI1},          {"U8", ElementType::kUI8},          {"I8", ElementType::kSI8},
    {"U16", ElementType::kUI16},         {"I16", ElementType::kSI16},        {"U32", ElementType::kUI32},
    {"I32", ElementType::kSI32},         {"U64", ElementType::kUI64},        {"I64", ElementType::kSI64},
    {"F16", ElementType::kF16},          {"BF16", ElementType::kBF16},       {"F32", ElementType::kF32},
    {"F64", ElementType::kF64},          {"F8_E4M3", ElementType::kF8E4M3FN}, {"F8_E5M2", ElementType::kF8E5M2},
    {"C64", ElementType::kComplexF32},
};

bool dtypeFromName(std::string_view name, ElementType* out) {
  for (const DtypeEntry& e : kDtypes)
    if (name == e.name) {
      *out = e.type;
      return true;
    }
  return false;
}

}  // namespace

const Literal* SafetensorsFile::find(std::string_view name) const {
  for (const NamedLiteral& t : tensors)
    if (t.name == name) return &t.value;
  return nullptr;
}

Expected<SafetensorsFile> decodeSafetensors(std::span<const uint8_t> bytes, std::string_view name) {
  std::string file(name);
  if (bytes.size() < 8) return invalidArgument(file + ": not a safetensors file (shorter than 8 bytes)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i) headerLen = (headerLen << 8) | bytes[static_cast<size_t>(i)];
  if (headerLen > kMaxHeaderBytes) return invalidArgument(file + ": safetensors header length " + std::to_string(headerLen) + " is too large");
  if (headerLen > bytes.size() - 8)
    return invalidArgument(file + ": safetensors header length " + std::to_string(headerLen) + " exceeds the file size");
  std::string_view headerText(reinterpret_cast<const char*>(bytes.data() + 8), headerLen);
  json header = json::parse(headerText, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return invalidArgument(file + ": safetensors header is not valid JSON");
  if (!header.is_object()) return invalidArgument(file + ": safetensors header is not a JSON object");

  const uint8_t* data = bytes.data() + 8 + headerLen;
  const uint64_t dataSize = bytes.size() - 8 - headerLen;

  SafetensorsFile out;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const json& entry = it.value();
    if (key == "__metadata__") {
      if (!entry.is_object()) return invalidArgument(file + ": safetensors __metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return invalidArgument(file + ": safetensors __metadata__ value '" + m.key() + "' is not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = file + ": tensor '" + key + "'";
    if (!entry.is_object()) return invalidArgument(where + ": header entry is not an object");
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string()) return invalidArgument(where + ": missing or non-string 'dtype'");
    if (shapeIt == entry.end() || !shapeIt->is_array()) return invalidArgument(where + ": missing or non-array 'shape'");
    if (offsetsIt == entry.end() || !offsetsIt->is_array() || offsetsIt->size() != 2)
      return invalidArgument(where + ": 'data_offsets' must be an array of two integers");
    ElementType type;
    std::string dtype = dtypeIt->get<std::string>();
    if (!dtypeFromName(dtype, &type)) return invalidArgument(where + ": unsupported dtype '" + dtype + "'");

    std::vector<int64_t> shape;
    uint64_t count = 1;
    for (const json& d : *shapeIt) {
      if (!d.is_number_unsigned()) return invalidArgument(where + ": shape entries must be non-negative integers");
      uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && count > (uint64_t{1} << 48) / dim) return invalidArgument(where + ": shape is too large");
      count *= dim;
      shape.push_back(static_cast<int64_t>(dim));
    }
    const json& b = (*offsetsIt)[0];
    const json& e = (*offsetsIt)[1];
    if (!b.is_number_unsigned() || !e.is_number_unsigned())
      return invalidArgument(where + ": 'data_offsets' must be non-negative integers");
    uint64_t begin = b.get<uint64_t>(), end = e.get<uint64_t>();
    if (begin > end) return invalidArgument(where + ": data_offsets begin " + std::to_string(begin) + " > end " + std::to_string(end));
    if (end > dataSize)
      return invalidArgument(where + ": data_offsets end " + std::to_string(end) + " is past the data buffer (" +
                             std::to_string(dataSize) + " bytes)");
    uint64_t need = count * static_cast<uint64_t>(storageBytes(type));
    if (end - begin != need)
      return invalidArgument(where + ": holds " + std::to_string(end - begin) + " bytes, " + dtype + " shape needs " +
                             std::to_string(need));
    Literal value = Literal::uninitialized(Type::tensor(shape, type));
    if (need > 0) std::memcpy(value.data(), data + begin, need);
    if (type == ElementType::kI1) {
      auto* p = reinterpret_cast<uint8_t*>(value.data());
      for (uint64_t i = 0; i < count; ++i)
        if (p[i] > 1) return invalidArgument(where + ": BOOL value " + std::to_string(p[i]) + " at index " + std::to_string(i));
    }
    spans.push_back({begin, end, key});
    out.tensors.push_back({key, std::move(value)});
  }

  // The buffer must be covered exactly: sort by offset and look for overlaps and holes.
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return spans[a].begin != spans[b].begin ? spans[a].begin < spans[b].begin : spans[a].end < spans[b].end;
  });
  uint64_t cursor = 0;
  for (size_t i : order) {
    if (spans[i].begin < cursor) return invalidArgument(file + ": tensor '" + spans[i].name + "' overlaps the previous tensor's data");
    if (spans[i].begin > cursor)
      return invalidArgument(file + ": tensor '" + spans[i].name + "' leaves a hole in the data buffer before offset " +
                             std::to_string(spans[i].begin));
    cursor = spans[i].end;
  }
  if (cursor != dataSize)
    return invalidArgument(file + ": data buffer has " + std::to_string(dataSize - cursor) + " trailing bytes no tensor uses");

  std::vector<NamedLiteral> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(out.tensors[i]));
  out.tensors = std::move(sorted);
  return out;
}

Expected<SafetensorsFile> readSafetensors(const std::string& path) {
  PhaseTimer phase("read safetensors");
  WF_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  return decodeSafetensors(file.bytes(), path);
}

Expected<std::string> safetensorsDtypeFor(ElementType type) {
  for (const DtypeEntry& e : kDtypes)
    if (e.type == type) return std::string(e.name);
  // Types safetensors lacks but whose storage is one of its dtypes.
  switch (type) {
    case ElementType::kSI2:
    case ElementType::kSI4: return std::string("I8");
    case ElementType::kUI2:
    case ElementType::kUI4: return std::string("U8");
    case ElementType::kIndex: return std::string("I64");
    default: break;
  }
  return unimplemented("no safetensors dtype for element type " + std::string(elementTypeName(type)));
}

Expected<std::string> encodeSafetensors(const SafetensorsFile& file) {
  json header = json::object();
  if (!file.metadata.empty()) {
    json meta = json::object();
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const NamedLiteral& t : file.tensors) {
    if (t.name.empty() || t.name == "__metadata__") return invalidArgument("invalid safetensors tensor name '" + t.name + "'");
    if (!names.insert(t.name).second) return invalidArgument("duplicate safetensors tensor name '" + t.name + "'");
    if (!t.value.type().isTensor()) return invalidArgument("tensor '" + t.name + "': not a tensor (" + t.value.type().toString() + ")");
    auto dtype = safetensorsDtypeFor(t.value.elementType());
    if (!dtype) return dtype.status().withContext("tensor '" + t.name + "'");
    json entry;
    entry["dtype"] = *dtype;
    entry["shape"] = t.value.shape();
    entry["data_offsets"] = {offset, offset + t.value.sizeBytes()};
    header[t.name] = entry;
    offset += t.value.sizeBytes();
  }
  std::string text = header.dump();
  // Pad with spaces so that the data starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += text;
  for (const NamedLiteral& t : file.tensors) out.append(reinterpret_cast<const char*>(t.value.data()), t.value.sizeBytes());
  return out;
}

Status writeSafetensors(const std::string& path, const SafetensorsFile& file) {
  WF_ASSIGN_OR_RETURN(std::string bytes, encodeSafetensors(file));
  return writeFileAtomically(path, bytes);
}

}  // namespace wf
