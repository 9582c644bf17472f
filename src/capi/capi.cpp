// The C API (include/warpforge/warpforge.h) over wf::Session. Every entry point converts Status
// values into a wf_status plus a per-thread message, and catches every exception at the
// boundary: nothing thrown inside the runtime crosses into C.
#include "warpforge/warpforge.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "runtime/session.h"

#ifndef WF_VERSION
#define WF_VERSION "unknown"
#endif

namespace {

using wf::ElementType;
using wf::Expected;
using wf::Literal;
using wf::NamedLiteral;
using wf::Status;
using wf::StatusCode;

static_assert(static_cast<int>(StatusCode::kInvalidArgument) == WF_INVALID_ARGUMENT);
static_assert(static_cast<int>(StatusCode::kParseError) == WF_PARSE_ERROR);
static_assert(static_cast<int>(StatusCode::kVerifyError) == WF_VERIFY_ERROR);
static_assert(static_cast<int>(StatusCode::kNotFound) == WF_NOT_FOUND);
static_assert(static_cast<int>(StatusCode::kUnimplemented) == WF_UNIMPLEMENTED);
static_assert(static_cast<int>(StatusCode::kOutOfRange) == WF_OUT_OF_RANGE);
static_assert(static_cast<int>(StatusCode::kResourceExhausted) == WF_RESOURCE_EXHAUSTED);
static_assert(static_cast<int>(StatusCode::kInternal) == WF_INTERNAL);
static_assert(static_cast<int>(StatusCode::kUnavailable) == WF_UNAVAILABLE);

struct LastError {
  wf_status code = WF_OK;
  std::string message;
};

LastError& lastError() {
  thread_local LastError error;
  return error;
}

wf_status fail(wf_status code, std::string message) {
  LastError& e = lastError();
  e.code = code;
  try {
    e.message = std::move(message);
  } catch (...) {
    e.message.clear();
  }
  return code;
}

wf_status fail(const Status& status) { return fail(static_cast<wf_status>(status.code()), status.message()); }

wf_status succeed() {
  LastError& e = lastError();
  e.code = WF_OK;
  e.message.clear();
  return WF_OK;
}

// Runs `body` (which returns a wf_status) with every exception turned into an error.
template <typename Body>
wf_status guarded(const char* function, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(WF_RESOURCE_EXHAUSTED, std::string(function) + ": out of host memory");
  } catch (const std::exception& e) {
    return fail(WF_INTERNAL, std::string(function) + ": unexpected exception: " + e.what());
  } catch (...) {
    return fail(WF_INTERNAL, std::string(function) + ": unexpected exception");
  }
}

// A manifest tensor's description, with the storage wf_tensor_info points into.
struct TensorDesc {
  std::string name;
  std::string dtype;
  ElementType elementType = ElementType::kF32;
  std::vector<int64_t> shape;                // -1 for dynamic
  std::vector<std::string> dimNameStorage;   // "" for static
  std::vector<const char*> dimNames;         // NULL for static

  static TensorDesc of(const wf::TensorSpec& spec) {
    TensorDesc d;
    d.name = spec.name;
    d.dtype = std::string(wf::elementTypeName(spec.dtype));
    d.elementType = spec.dtype;
    for (const wf::ManifestDim& dim : spec.shape) {
      d.shape.push_back(dim.isDynamic() ? -1 : dim.size);
      d.dimNameStorage.push_back(dim.name);
    }
    for (const std::string& n : d.dimNameStorage) d.dimNames.push_back(n.empty() ? nullptr : n.c_str());
    return d;
  }
  bool isStatic() const { return std::none_of(shape.begin(), shape.end(), [](int64_t s) { return s < 0; }); }
  void fill(wf_tensor_info* info) const {
    info->name = name.c_str();
    info->dtype = dtype.c_str();
    info->element_size = static_cast<size_t>(wf::storageBytes(elementType));
    info->rank = shape.size();
    info->shape = shape.data();
    info->dim_names = dimNames.data();
  }
};

}  // namespace

struct wf_session {
  std::unique_ptr<wf::Session> session;
  std::string name;
  std::string deviceName;
  std::vector<TensorDesc> inputs, outputs;
};

struct wf_result {
  struct Output {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
    Literal value;
  };
  std::vector<Output> outputs;
  wf::RunReport report;
  double wallMs = 0;
};

namespace {

Expected<size_t> findByName(const std::vector<TensorDesc>& tensors, const char* name, const char* what) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return i;
  std::string known;
  for (const TensorDesc& t : tensors) known += (known.empty() ? "" : ", ") + t.name;
  return wf::notFound(std::string("no ") + what + " named '" + name + "' (the package has: " + known + ")");
}

// The caller's inputs as named literals, each one's bytes copied once and its size checked.
Expected<std::vector<NamedLiteral>> toLiterals(const wf_session* s, const wf_input* inputs, size_t count) {
  if (count > 0 && inputs == nullptr) return wf::invalidArgument("inputs is NULL but num_inputs is " + std::to_string(count));
  std::vector<NamedLiteral> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const wf_input& in = inputs[i];
    size_t index = in.index;
    if (in.name != nullptr) {
      WF_ASSIGN_OR_RETURN(index, findByName(s->inputs, in.name, "input"));
    } else if (index >= s->inputs.size()) {
      return wf::outOfRange("input index " + std::to_string(index) + " is out of range: the package has " +
                            std::to_string(s->inputs.size()) + " inputs");
    }
    const TensorDesc& desc = s->inputs[index];
    std::vector<int64_t> shape;
    if (in.shape != nullptr) {
      shape.assign(in.shape, in.shape + in.rank);
      for (int64_t d : shape)
        if (d < 0) return wf::invalidArgument("input '" + desc.name + "': negative dimension " + std::to_string(d));
    } else {
      if (!desc.isStatic())
        return wf::invalidArgument("input '" + desc.name + "' has dynamic dimensions: give its shape");
      shape = desc.shape;
    }
    size_t elements = 1;
    for (int64_t d : shape) elements *= static_cast<size_t>(d);
    size_t bytes = elements * static_cast<size_t>(wf::storageBytes(desc.elementType));
    Literal value = Literal::uninitialized(wf::Type::tensor(shape, desc.elementType));
    if (in.size_bytes != bytes)
      return wf::invalidArgument("input '" + desc.name + "': " + std::to_string(in.size_bytes) + " bytes given, " +
                                 std::to_string(bytes) + " expected for " + value.type().toString());
    if (bytes > 0) {
      if (in.data == nullptr) return wf::invalidArgument("input '" + desc.name + "': data is NULL");
      std::memcpy(value.data(), in.data, bytes);
    }
    out.push_back({desc.name, std::move(value)});
  }
  return out;
}

wf_result* makeResult(wf::SessionResult&& run, double wallMs) {
  auto result = std::make_unique<wf_result>();
  for (NamedLiteral& o : run.outputs) {
    wf_result::Output out;
    out.name = o.name;
    out.dtype = std::string(wf::elementTypeName(o.value.elementType()));
    out.shape = o.value.shape();
    out.value = std::move(o.value);
    result->outputs.push_back(std::move(out));
  }
  result->report = std::move(run.report);
  result->wallMs = wallMs;
  return result.release();
}

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Status benchArguments(wf_session* s, std::span<const Literal> args, int warmup, int iters, double* wallMs,
                      double* deviceMs) {
  if (warmup < 0 || iters < 0)
    return wf::invalidArgument("warmup and iters must not be negative (" + std::to_string(warmup) + ", " +
                               std::to_string(iters) + ")");
  for (int i = 0; i < warmup + iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto run = s->session->runPrepared(args);
    double wall = millisSince(start);
    if (!run) return run.status();
    if (i < warmup) continue;
    int k = i - warmup;
    if (wallMs != nullptr) wallMs[k] = wall;
    if (deviceMs != nullptr) deviceMs[k] = run->report.deviceMillis >= 0 ? run->report.deviceMillis : -1.0;
  }
  return Status::ok();
}

wf_status nullArgument(const char* function, const char* what) {
  return fail(WF_INVALID_ARGUMENT, std::string(function) + ": " + what + " is NULL");
}

}  // namespace

extern "C" {

int wf_api_version(void) { return WF_API_VERSION; }

const char* wf_version(void) { return WF_VERSION; }

const char* wf_status_name(wf_status status) {
  if (status < WF_OK || status > WF_INTERNAL) return "unknown";
  return wf::statusCodeName(static_cast<StatusCode>(status));
}

wf_status wf_last_error_code(void) { return lastError().code; }

const char* wf_last_error_message(void) { return lastError().message.c_str(); }

const char* wf_device_kinds(void) {
  static const std::string kinds = [] {
    std::string joined;
    try {
      wf::registerBuiltinBackends();
      std::vector<std::string> all = wf::registeredBackendKinds();
      std::sort(all.begin(), all.end());
      for (const std::string& k : all) joined += (joined.empty() ? "" : ",") + k;
    } catch (...) {
    }
    return joined;
  }();
  return kinds.c_str();
}

void wf_session_options_init(wf_session_options* options) {
  if (options == nullptr) return;
  options->device = "cpu";
  options->allow_tf32 = 0;
  options->allow_cpu_fallback = 0;
  options->threads = 0;
}

wf_status wf_session_open(const char* package_dir, const wf_session_options* options, wf_session** session) {
  return guarded("wf_session_open", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_open", "session");
    *session = nullptr;
    if (package_dir == nullptr) return nullArgument("wf_session_open", "package_dir");
    wf_session_options defaults;
    wf_session_options_init(&defaults);
    const wf_session_options& o = options != nullptr ? *options : defaults;
    if (o.threads < 0) return fail(WF_INVALID_ARGUMENT, "threads must not be negative, got " + std::to_string(o.threads));

    wf::SessionOptions sessionOptions;
    auto device = wf::DeviceSpec::parse(o.device != nullptr ? o.device : "cpu");
    if (!device) return fail(device.status());
    sessionOptions.device = *device;
    sessionOptions.compile.allowTf32 = sessionOptions.compile.allowTf32Convolutions = o.allow_tf32 != 0;
    sessionOptions.compile.allowCpuFallback = o.allow_cpu_fallback != 0;
    sessionOptions.compile.numThreads = o.threads;
    wf::registerBuiltinBackends();
    auto opened = wf::Session::open(package_dir, sessionOptions);
    if (!opened) return fail(opened.status());

    auto s = std::make_unique<wf_session>();
    s->session = std::move(*opened);
    const wf::Manifest& m = s->session->manifest();
    s->name = m.name;
    s->deviceName = s->session->deviceName();
    for (const wf::TensorSpec& spec : m.inputs) s->inputs.push_back(TensorDesc::of(spec));
    for (const wf::TensorSpec& spec : m.outputs) s->outputs.push_back(TensorDesc::of(spec));
    *session = s.release();
    return succeed();
  });
}

void wf_session_close(wf_session* session) {
  try {
    delete session;
  } catch (...) {
  }
}

size_t wf_session_num_inputs(const wf_session* session) { return session ? session->inputs.size() : 0; }

size_t wf_session_num_outputs(const wf_session* session) { return session ? session->outputs.size() : 0; }

static wf_status tensorInfo(const char* function, const wf_session* session, const std::vector<TensorDesc>* list,
                            const char* what, size_t index, wf_tensor_info* info) {
  if (session == nullptr) return nullArgument(function, "session");
  if (info == nullptr) return nullArgument(function, "info");
  if (index >= list->size())
    return fail(WF_OUT_OF_RANGE, std::string(function) + ": " + what + " index " + std::to_string(index) +
                                     " is out of range: the package has " + std::to_string(list->size()));
  (*list)[index].fill(info);
  return succeed();
}

wf_status wf_session_input_info(const wf_session* session, size_t index, wf_tensor_info* info) {
  return guarded("wf_session_input_info", [&] {
    return tensorInfo("wf_session_input_info", session, session ? &session->inputs : nullptr, "input", index, info);
  });
}

wf_status wf_session_output_info(const wf_session* session, size_t index, wf_tensor_info* info) {
  return guarded("wf_session_output_info", [&] {
    return tensorInfo("wf_session_output_info", session, session ? &session->outputs : nullptr, "output", index, info);
  });
}

wf_status wf_session_find_input(const wf_session* session, const char* name, size_t* index) {
  return guarded("wf_session_find_input", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_find_input", "session");
    if (name == nullptr || index == nullptr) return nullArgument("wf_session_find_input", "name or index");
    auto found = findByName(session->inputs, name, "input");
    if (!found) return fail(found.status());
    *index = *found;
    return succeed();
  });
}

wf_status wf_session_find_output(const wf_session* session, const char* name, size_t* index) {
  return guarded("wf_session_find_output", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_find_output", "session");
    if (name == nullptr || index == nullptr) return nullArgument("wf_session_find_output", "name or index");
    auto found = findByName(session->outputs, name, "output");
    if (!found) return fail(found.status());
    *index = *found;
    return succeed();
  });
}

const char* wf_session_name(const wf_session* session) { return session ? session->name.c_str() : ""; }

const char* wf_session_device_name(const wf_session* session) { return session ? session->deviceName.c_str() : ""; }

size_t wf_session_device_bytes_in_use(const wf_session* session) {
  try {
    return session ? session->session->deviceBytesInUse() : 0;
  } catch (...) {
    return 0;
  }
}

wf_status wf_session_run(wf_session* session, const wf_input* inputs, size_t num_inputs, wf_result** result) {
  return guarded("wf_session_run", [&]() -> wf_status {
    if (result == nullptr) return nullArgument("wf_session_run", "result");
    *result = nullptr;
    if (session == nullptr) return nullArgument("wf_session_run", "session");
    auto start = std::chrono::steady_clock::now();
    auto named = toLiterals(session, inputs, num_inputs);
    if (!named) return fail(named.status());
    auto run = session->session->run(*named);
    if (!run) return fail(run.status());
    *result = makeResult(std::move(*run), millisSince(start));
    return succeed();
  });
}

wf_status wf_session_run_into(wf_session* session, const wf_input* inputs, size_t num_inputs,
                              wf_output_buffer* outputs, size_t num_outputs, wf_run_report* report) {
  return guarded("wf_session_run_into", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_run_into", "session");
    if (num_outputs > 0 && outputs == nullptr) return nullArgument("wf_session_run_into", "outputs");
    // Resolve every buffer before running, so that a bad name fails without a run.
    std::vector<size_t> indices(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) {
      size_t index = outputs[i].index;
      if (outputs[i].name != nullptr) {
        auto found = findByName(session->outputs, outputs[i].name, "output");
        if (!found) return fail(found.status());
        index = *found;
      } else if (index >= session->outputs.size()) {
        return fail(WF_OUT_OF_RANGE, "output index " + std::to_string(index) + " is out of range: the package has " +
                                         std::to_string(session->outputs.size()) + " outputs");
      }
      indices[i] = index;
    }
    auto start = std::chrono::steady_clock::now();
    auto named = toLiterals(session, inputs, num_inputs);
    if (!named) return fail(named.status());
    auto run = session->session->run(*named);
    if (!run) return fail(run.status());
    for (size_t i = 0; i < num_outputs; ++i) {
      const Literal& value = run->outputs[indices[i]].value;
      if (outputs[i].capacity_bytes < value.sizeBytes() || (value.sizeBytes() > 0 && outputs[i].data == nullptr))
        return fail(WF_INVALID_ARGUMENT, "output '" + run->outputs[indices[i]].name + "' (" + value.type().toString() +
                                             ") needs " + std::to_string(value.sizeBytes()) + " bytes, the buffer has " +
                                             std::to_string(outputs[i].capacity_bytes));
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      const Literal& value = run->outputs[indices[i]].value;
      if (value.sizeBytes() > 0) std::memcpy(outputs[i].data, value.data(), value.sizeBytes());
      outputs[i].size_bytes = value.sizeBytes();
    }
    if (report != nullptr) {
      report->wall_ms = millisSince(start);
      report->device_ms = run->report.deviceMillis >= 0 ? run->report.deviceMillis : -1.0;
      report->num_host_fallback_ops = run->report.hostFallbackOps.size();
    }
    return succeed();
  });
}

size_t wf_result_num_outputs(const wf_result* result) { return result ? result->outputs.size() : 0; }

static wf_status checkOutputIndex(const char* function, const wf_result* result, size_t index) {
  if (result == nullptr) return nullArgument(function, "result");
  if (index >= result->outputs.size())
    return fail(WF_OUT_OF_RANGE, std::string(function) + ": output index " + std::to_string(index) +
                                     " is out of range: the result has " + std::to_string(result->outputs.size()));
  return WF_OK;
}

wf_status wf_result_output(const wf_result* result, size_t index, wf_tensor_view* view) {
  return guarded("wf_result_output", [&]() -> wf_status {
    if (wf_status s = checkOutputIndex("wf_result_output", result, index); s != WF_OK) return s;
    if (view == nullptr) return nullArgument("wf_result_output", "view");
    const wf_result::Output& o = result->outputs[index];
    view->name = o.name.c_str();
    view->dtype = o.dtype.c_str();
    view->element_size = static_cast<size_t>(wf::storageBytes(o.value.elementType()));
    view->rank = o.shape.size();
    view->shape = o.shape.data();
    view->data = o.value.data();
    view->size_bytes = o.value.sizeBytes();
    return succeed();
  });
}

wf_status wf_result_find_output(const wf_result* result, const char* name, size_t* index) {
  return guarded("wf_result_find_output", [&]() -> wf_status {
    if (result == nullptr) return nullArgument("wf_result_find_output", "result");
    if (name == nullptr || index == nullptr) return nullArgument("wf_result_find_output", "name or index");
    for (size_t i = 0; i < result->outputs.size(); ++i)
      if (result->outputs[i].name == name) {
        *index = i;
        return succeed();
      }
    return fail(WF_NOT_FOUND, std::string("no output named '") + name + "'");
  });
}

wf_status wf_result_copy_output(const wf_result* result, size_t index, void* data, size_t capacity_bytes) {
  return guarded("wf_result_copy_output", [&]() -> wf_status {
    if (wf_status s = checkOutputIndex("wf_result_copy_output", result, index); s != WF_OK) return s;
    const wf_result::Output& o = result->outputs[index];
    size_t bytes = o.value.sizeBytes();
    if (capacity_bytes < bytes || (bytes > 0 && data == nullptr))
      return fail(WF_INVALID_ARGUMENT, "output '" + o.name + "' (" + o.value.type().toString() + ") needs " +
                                           std::to_string(bytes) + " bytes, the buffer has " +
                                           std::to_string(capacity_bytes));
    if (bytes > 0) std::memcpy(data, o.value.data(), bytes);
    return succeed();
  });
}

wf_status wf_result_report(const wf_result* result, wf_run_report* report) {
  if (result == nullptr) return nullArgument("wf_result_report", "result");
  if (report == nullptr) return nullArgument("wf_result_report", "report");
  report->wall_ms = result->wallMs;
  report->device_ms = result->report.deviceMillis >= 0 ? result->report.deviceMillis : -1.0;
  report->num_host_fallback_ops = result->report.hostFallbackOps.size();
  return succeed();
}

const char* wf_result_host_fallback_op(const wf_result* result, size_t index) {
  if (result == nullptr || index >= result->report.hostFallbackOps.size()) return nullptr;
  return result->report.hostFallbackOps[index].c_str();
}

void wf_result_free(wf_result* result) {
  try {
    delete result;
  } catch (...) {
  }
}

wf_status wf_session_bench(wf_session* session, int warmup, int iters, double* wall_ms, double* device_ms) {
  return guarded("wf_session_bench", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_bench", "session");
    auto golden = session->session->package().loadGoldenInputs();
    if (!golden) return fail(golden.status());
    auto args = session->session->prepareInputs(*golden);
    if (!args) return fail(args.status());
    Status s = benchArguments(session, *args, warmup, iters, wall_ms, device_ms);
    return s.isOk() ? succeed() : fail(s);
  });
}

wf_status wf_session_bench_inputs(wf_session* session, const wf_input* inputs, size_t num_inputs, int warmup,
                                  int iters, double* wall_ms, double* device_ms) {
  return guarded("wf_session_bench_inputs", [&]() -> wf_status {
    if (session == nullptr) return nullArgument("wf_session_bench_inputs", "session");
    auto named = toLiterals(session, inputs, num_inputs);
    if (!named) return fail(named.status());
    auto args = session->session->prepareInputs(*named);
    if (!args) return fail(args.status());
    Status s = benchArguments(session, *args, warmup, iters, wall_ms, device_ms);
    return s.isOk() ? succeed() : fail(s);
  });
}

}  // extern "C"
