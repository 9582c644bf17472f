#include "serve/protocol.h"

#include <cstring>
#include <limits>

namespace wf::serve {
namespace {

using nlohmann::json;

struct DatatypeName {
  ElementType type;
  std::string_view name;
};
constexpr DatatypeName kDatatypes[] = {
    {ElementType::kI1, "BOOL"},     {ElementType::kUI8, "UINT8"},   {ElementType::kUI16, "UINT16"},
    {ElementType::kUI32, "UINT32"}, {ElementType::kUI64, "UINT64"}, {ElementType::kSI8, "INT8"},
    {ElementType::kSI16, "INT16"},  {ElementType::kSI32, "INT32"},  {ElementType::kSI64, "INT64"},
    {ElementType::kF16, "FP16"},    {ElementType::kBF16, "BF16"},   {ElementType::kF32, "FP32"},
    {ElementType::kF64, "FP64"},
};

// Appends the leaves of a (possibly nested) JSON array, row-major, stopping past `limit`.
Status flattenData(const json& data, std::vector<const json*>& leaves, size_t limit, const std::string& what) {
  if (!data.is_array()) {
    leaves.push_back(&data);
    return Status::ok();
  }
  for (const json& item : data) {
    if (leaves.size() > limit) return Status::ok();  // the caller reports the count mismatch
    WF_RETURN_IF_ERROR(flattenData(item, leaves, limit, what));
  }
  return Status::ok();
}

Status fillFromJson(Literal& value, const json& data, const std::string& what) {
  const ElementType type = value.elementType();
  const auto n = static_cast<size_t>(value.numElements());
  std::vector<const json*> leaves;
  leaves.reserve(n);
  WF_RETURN_IF_ERROR(flattenData(data, leaves, n, what));
  if (leaves.size() != n)
    return invalidArgument(what + ": 'data' holds " + (leaves.size() > n ? "more than " + std::to_string(n) : std::to_string(leaves.size())) +
                           " elements, the shape needs " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    const json& v = *leaves[i];
    const auto at = static_cast<int64_t>(i);
    if (type == ElementType::kI1) {
      if (!v.is_boolean()) return invalidArgument(what + ": element " + std::to_string(i) + " is not a boolean (datatype BOOL)");
      value.setInt(at, v.get<bool>() ? 1 : 0);
    } else if (isFloat(type)) {
      if (!v.is_number()) return invalidArgument(what + ": element " + std::to_string(i) + " is not a number");
      value.setDouble(at, v.get<double>());
    } else if (type == ElementType::kUI64) {
      if (!v.is_number_unsigned()) return invalidArgument(what + ": element " + std::to_string(i) + " is not a non-negative integer");
      value.setBits(at, v.get<uint64_t>());
    } else {
      if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
        return invalidArgument(what + ": element " + std::to_string(i) + " is not an integer of datatype " + std::string(kserveDatatype(type)));
      int64_t x = v.get<int64_t>();
      value.setInt(at, x);
      if (value.getInt(at) != x)
        return invalidArgument(what + ": element " + std::to_string(i) + " (" + std::to_string(x) + ") does not fit " +
                               std::string(kserveDatatype(type)));
    }
  }
  return Status::ok();
}

// `parameters.<key>` of a JSON object, or null.
const json* parameter(const json& object, const char* key) {
  auto params = object.find("parameters");
  if (params == object.end() || !params->is_object()) return nullptr;
  auto it = params->find(key);
  return it == params->end() ? nullptr : &*it;
}

Expected<bool> boolParameter(const json& object, const char* key, const std::string& what) {
  const json* p = parameter(object, key);
  if (!p) return false;
  if (!p->is_boolean()) return invalidArgument(what + ": parameter '" + key + "' must be a boolean");
  return p->get<bool>();
}

Expected<std::string> stringField(const json& object, const char* key, const std::string& what) {
  auto it = object.find(key);
  if (it == object.end()) return invalidArgument(what + ": missing '" + key + "'");
  if (!it->is_string()) return invalidArgument(what + ": '" + key + "' must be a string");
  return it->get<std::string>();
}

Expected<NamedLiteral> parseInput(const json& input, size_t index, std::string_view binary, size_t& binaryOffset) {
  std::string what = "inputs[" + std::to_string(index) + "]";
  if (!input.is_object()) return invalidArgument(what + " must be an object");
  WF_ASSIGN_OR_RETURN(std::string name, stringField(input, "name", what));
  what = "input '" + name + "'";
  WF_ASSIGN_OR_RETURN(std::string datatype, stringField(input, "datatype", what));
  std::optional<ElementType> type = elementTypeFromKServe(datatype);
  if (!type)
    return invalidArgument(what + ": datatype '" + datatype + "' is not supported (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64)");
  auto shapeIt = input.find("shape");
  if (shapeIt == input.end() || !shapeIt->is_array()) return invalidArgument(what + ": missing 'shape' (an array of sizes)");
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (const json& d : *shapeIt) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return invalidArgument(what + ": 'shape' must hold non-negative integers, got " + shapeIt->dump());
    shape.push_back(d.get<int64_t>());
    if (shape.back() != 0 && elements > (int64_t(1) << 40) / shape.back())
      return invalidArgument(what + ": shape " + shapeIt->dump() + " is too large");
    elements *= shape.back();
  }
  Literal value = Literal::zeros(Type::tensor(shape, *type));

  const json* binarySize = parameter(input, "binary_data_size");
  auto data = input.find("data");
  if (binarySize) {
    if (data != input.end()) return invalidArgument(what + ": has both 'data' and parameter 'binary_data_size'");
    if (!binarySize->is_number_unsigned())
      return invalidArgument(what + ": parameter 'binary_data_size' must be a non-negative integer");
    auto size = binarySize->get<uint64_t>();
    if (size != value.sizeBytes())
      return invalidArgument(what + ": binary_data_size is " + std::to_string(size) + " bytes, shape " + shapeIt->dump() +
                             " of " + datatype + " needs " + std::to_string(value.sizeBytes()));
    if (binaryOffset + size > binary.size())
      return invalidArgument(what + ": binary data truncated: needs " + std::to_string(size) + " bytes at offset " +
                             std::to_string(binaryOffset) + ", the body has " + std::to_string(binary.size()) +
                             " bytes of binary data");
    if (size) std::memcpy(value.data(), binary.data() + binaryOffset, size);
    binaryOffset += size;
    if (*type == ElementType::kI1) {
      const auto* bytes = value.dataAs<uint8_t>();
      for (int64_t i = 0; i < value.numElements(); ++i)
        if (bytes[i] > 1) return invalidArgument(what + ": BOOL element " + std::to_string(i) + " is neither 0 nor 1");
    }
  } else {
    if (data == input.end()) return invalidArgument(what + ": missing 'data' (or parameter 'binary_data_size')");
    WF_RETURN_IF_ERROR(fillFromJson(value, *data, what));
  }
  return NamedLiteral{std::move(name), std::move(value)};
}

json outputData(const Literal& value) {
  json data = json::array();
  auto& array = data.get_ref<json::array_t&>();
  const auto n = value.numElements();
  array.reserve(static_cast<size_t>(n));
  const ElementType type = value.elementType();
  if (type == ElementType::kF32) {
    const float* p = value.dataAs<float>();
    for (int64_t i = 0; i < n; ++i) array.emplace_back(static_cast<double>(p[i]));
  } else if (type == ElementType::kI1) {
    for (int64_t i = 0; i < n; ++i) array.emplace_back(value.getInt(i) != 0);
  } else if (isFloat(type)) {
    for (int64_t i = 0; i < n; ++i) array.emplace_back(value.getDouble(i));
  } else if (type == ElementType::kUI64) {
    for (int64_t i = 0; i < n; ++i) array.emplace_back(value.getBits(i));
  } else {
    for (int64_t i = 0; i < n; ++i) array.emplace_back(value.getInt(i));
  }
  return data;
}

json shapeJson(const std::vector<ManifestDim>& shape) {
  json out = json::array();
  for (const ManifestDim& d : shape) out.push_back(d.isDynamic() ? int64_t(-1) : d.size);
  return out;
}

json tensorMetadata(const TensorSpec& spec) {
  std::string_view datatype = kserveDatatype(spec.dtype);
  return {{"name", spec.name},
          {"datatype", datatype.empty() ? std::string(elementTypeName(spec.dtype)) : std::string(datatype)},
          {"shape", shapeJson(spec.shape)}};
}

}  // namespace

std::string_view kserveDatatype(ElementType type) {
  for (const DatatypeName& d : kDatatypes)
    if (d.type == type) return d.name;
  return {};
}

std::optional<ElementType> elementTypeFromKServe(std::string_view datatype) {
  for (const DatatypeName& d : kDatatypes)
    if (d.name == datatype) return d.type;
  return std::nullopt;
}

Expected<InferRequest> parseInferRequest(std::string_view body, std::optional<size_t> headerLength) {
  std::string_view header = body, binary;
  if (headerLength) {
    if (*headerLength > body.size())
      return invalidArgument("Inference-Header-Content-Length is " + std::to_string(*headerLength) + " but the body has " +
                             std::to_string(body.size()) + " bytes");
    header = body.substr(0, *headerLength);
    binary = body.substr(*headerLength);
  }
  json root = json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return invalidArgument("the request body is not valid JSON");
  if (!root.is_object()) return invalidArgument("the request body must be a JSON object");

  InferRequest request;
  if (auto id = root.find("id"); id != root.end()) {
    if (!id->is_string()) return invalidArgument("'id' must be a string");
    request.id = id->get<std::string>();
  }
  WF_ASSIGN_OR_RETURN(request.binaryOutputs, boolParameter(root, "binary_data_output", "request"));
  if (const json* timeout = parameter(root, "timeout")) {
    if (!timeout->is_number_integer() || timeout->get<int64_t>() < 0)
      return invalidArgument("parameter 'timeout' must be a non-negative integer (microseconds)");
    if (timeout->get<int64_t>() > 0) request.timeoutUs = timeout->get<int64_t>();
  }

  auto inputs = root.find("inputs");
  if (inputs == root.end() || !inputs->is_array() || inputs->empty())
    return invalidArgument("'inputs' must be a non-empty array");
  size_t binaryOffset = 0;
  for (size_t i = 0; i < inputs->size(); ++i) {
    WF_ASSIGN_OR_RETURN(NamedLiteral input, parseInput((*inputs)[i], i, binary, binaryOffset));
    for (const NamedLiteral& earlier : request.inputs)
      if (earlier.name == input.name) return invalidArgument("input '" + input.name + "' is given twice");
    request.inputs.push_back(std::move(input));
  }
  if (binaryOffset != binary.size())
    return invalidArgument("the body has " + std::to_string(binary.size() - binaryOffset) +
                           " bytes of binary data that no input's binary_data_size accounts for");

  if (auto outputs = root.find("outputs"); outputs != root.end()) {
    if (!outputs->is_array()) return invalidArgument("'outputs' must be an array");
    for (size_t i = 0; i < outputs->size(); ++i) {
      const json& o = (*outputs)[i];
      std::string what = "outputs[" + std::to_string(i) + "]";
      if (!o.is_object()) return invalidArgument(what + " must be an object");
      RequestedOutput out;
      WF_ASSIGN_OR_RETURN(out.name, stringField(o, "name", what));
      WF_ASSIGN_OR_RETURN(out.binary, boolParameter(o, "binary_data", "output '" + out.name + "'"));
      if (!parameter(o, "binary_data")) out.binary = request.binaryOutputs;
      if (parameter(o, "classification"))
        return invalidArgument("output '" + out.name + "': the classification extension is not supported");
      request.outputs.push_back(std::move(out));
    }
  }
  return request;
}

Expected<InferResponseBody> encodeInferResponse(const std::string& modelName, const InferRequest& request,
                                                const std::vector<NamedLiteral>& outputs) {
  std::vector<RequestedOutput> selected = request.outputs;
  if (selected.empty())
    for (const NamedLiteral& o : outputs) selected.push_back({o.name, request.binaryOutputs});
  json header = {{"model_name", modelName}, {"model_version", "1"}};
  if (!request.id.empty()) header["id"] = request.id;
  json list = json::array();
  std::string binary;
  for (const RequestedOutput& want : selected) {
    const NamedLiteral* found = nullptr;
    for (const NamedLiteral& o : outputs)
      if (o.name == want.name) found = &o;
    if (!found) {
      std::string names;
      for (const NamedLiteral& o : outputs) names += (names.empty() ? "'" : ", '") + o.name + "'";
      return invalidArgument("output '" + want.name + "' is not an output of model '" + modelName + "' (outputs: " + names + ")");
    }
    const Literal& value = found->value;
    std::string_view datatype = kserveDatatype(value.elementType());
    if (datatype.empty())
      return unimplemented("output '" + want.name + "' has element type " + std::string(elementTypeName(value.elementType())) +
                           ", which the inference protocol cannot carry");
    json entry = {{"name", want.name}, {"datatype", std::string(datatype)}, {"shape", value.shape()}};
    if (want.binary) {
      entry["parameters"] = {{"binary_data_size", value.sizeBytes()}};
      binary.append(reinterpret_cast<const char*>(value.data()), value.sizeBytes());
    } else {
      entry["data"] = outputData(value);
    }
    list.push_back(std::move(entry));
  }
  header["outputs"] = std::move(list);
  InferResponseBody response;
  response.body = header.dump(-1, ' ', false, json::error_handler_t::replace);
  bool anyBinary = false;
  for (const RequestedOutput& o : selected) anyBinary = anyBinary || o.binary;
  if (anyBinary) {
    response.jsonLength = response.body.size();
    response.body += binary;
  }
  return response;
}

nlohmann::json modelMetadata(const Manifest& manifest) {
  json inputs = json::array(), outputs = json::array();
  for (const TensorSpec& t : manifest.inputs) inputs.push_back(tensorMetadata(t));
  for (const TensorSpec& t : manifest.outputs) outputs.push_back(tensorMetadata(t));
  return {{"name", manifest.name}, {"versions", {"1"}}, {"platform", "warpforge_stablehlo"},
          {"inputs", inputs},      {"outputs", outputs}};
}

}  // namespace wf::serve
