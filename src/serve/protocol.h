// The KServe v2 / Open Inference Protocol REST payloads: inference requests (JSON tensors and the
// binary-tensor extension) into Literals, and outputs back into a response body.
//
//   auto request = parseInferRequest(body, headerLength);   // headerLength: Inference-Header-Content-Length
//   if (!request) return 400 with request.status().message();
//   ... run ...
//   auto response = encodeInferResponse("resnet18", *request, outputs);
//
// Data types are the protocol's names (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64);
// BYTES tensors are not supported. JSON `data` may be flat or nested (row-major either way); a
// binary input carries `"parameters": {"binary_data_size": N}` and its N raw little-endian bytes
// follow the JSON header in the order the inputs are listed. Every error names the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/literal.h"
#include "runtime/package.h"
#include "runtime/safetensors.h"
#include "support/status.h"

namespace wf::serve {

// "FP32" for f32; empty when the protocol has no name for the type.
std::string_view kserveDatatype(ElementType type);
std::optional<ElementType> elementTypeFromKServe(std::string_view datatype);

struct RequestedOutput {
  std::string name;
  bool binary = false;
};

struct InferRequest {
  std::string id;                        // echoed in the response; may be empty
  std::vector<NamedLiteral> inputs;      // in request order, not yet checked against a manifest
  std::vector<RequestedOutput> outputs;  // empty: every output of the model
  bool binaryOutputs = false;            // parameters.binary_data_output: the default for outputs
  std::optional<int64_t> timeoutUs;      // parameters.timeout (microseconds, as Triton clients send)
};

// `headerLength` is the value of the Inference-Header-Content-Length header when present: the
// JSON header is the body's first `headerLength` bytes and binary tensor data follows it.
Expected<InferRequest> parseInferRequest(std::string_view body, std::optional<size_t> headerLength);

struct InferResponseBody {
  std::string body;
  // Set when binary outputs follow the JSON header: the header's length in bytes, for the
  // Inference-Header-Content-Length response header (Content-Type application/octet-stream).
  std::optional<size_t> jsonLength;
};

// Encodes `outputs` (the model's, in manifest order) selected and formatted as `request` asks; a
// requested output the model does not have is an error naming it and the model's outputs.
Expected<InferResponseBody> encodeInferResponse(const std::string& modelName, const InferRequest& request,
                                                const std::vector<NamedLiteral>& outputs);

// GET /v2/models/{name}: name, versions, platform, inputs and outputs with datatype and shape
// (-1 for a dynamic dimension).
nlohmann::json modelMetadata(const Manifest& manifest);

}  // namespace wf::serve
