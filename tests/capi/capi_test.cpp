// The C API (include/warpforge/warpforge.h) through libwarpforge.so: the fixture packages on the
// CPU against their golden outputs, and every error path returning a status and a message.
#include "warpforge/warpforge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern "C" int capi_test_from_c(void);

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return (fs::path(WF_SOURCE_DIR) / "tests" / "data" / "packages" / name).string();
}

struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  size_t count() const { return bytes.size() / sizeof(float); }
};

// A safetensors file read independently of the library: 8-byte header length, JSON header, data.
std::map<std::string, Tensor> readSafetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  uint64_t headerLen = 0;
  in.read(reinterpret_cast<char*>(&headerLen), 8);
  std::string header(headerLen, '\0');
  in.read(header.data(), static_cast<std::streamsize>(headerLen));
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, Tensor> out;
  const nlohmann::json parsed = nlohmann::json::parse(header);
  for (const auto& [name, entry] : parsed.items()) {
    if (name == "__metadata__") continue;
    Tensor t;
    t.dtype = entry["dtype"].get<std::string>();
    t.shape = entry["shape"].get<std::vector<int64_t>>();
    auto offsets = entry["data_offsets"].get<std::vector<size_t>>();
    t.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(offsets[0]), data.begin() + static_cast<std::ptrdiff_t>(offsets[1]));
    out[name] = std::move(t);
  }
  return out;
}

// |a - e| <= atol + rtol * |e| everywhere (the package's tolerances, rtol 1e-3 / atol 1e-5).
void expectClose(const float* actual, const Tensor& golden, const std::string& what) {
  for (size_t i = 0; i < golden.count(); ++i)
    ASSERT_LE(std::fabs(actual[i] - golden.f32()[i]), 1e-5 + 1e-3 * std::fabs(golden.f32()[i]))
        << what << " element " << i << ": " << actual[i] << " vs golden " << golden.f32()[i];
}

struct SessionCloser {
  void operator()(wf_session* s) const { wf_session_close(s); }
};
using SessionPtr = std::unique_ptr<wf_session, SessionCloser>;

SessionPtr openCpu(const std::string& dir) {
  wf_session_options options;
  wf_session_options_init(&options);
  options.device = "cpu";
  wf_session* s = nullptr;
  wf_status status = wf_session_open(dir.c_str(), &options, &s);
  EXPECT_EQ(status, WF_OK) << wf_last_error_message();
  return SessionPtr(s);
}

std::string lastError() { return wf_last_error_message(); }

TEST(CApi, Version) {
  EXPECT_EQ(wf_api_version(), WF_API_VERSION);
  EXPECT_STRNE(wf_version(), "");
  EXPECT_NE(std::string(wf_device_kinds()).find("cpu"), std::string::npos) << wf_device_kinds();
  EXPECT_STREQ(wf_status_name(WF_INVALID_ARGUMENT), "invalid_argument");
  EXPECT_STREQ(wf_status_name(static_cast<wf_status>(99)), "unknown");
  EXPECT_EQ(capi_test_from_c(), 0);
}

TEST(CApi, RunsTheMlpOnItsGoldenInputs) {
  SessionPtr s = openCpu(fixture("mlp"));
  ASSERT_TRUE(s);
  EXPECT_STREQ(wf_session_name(s.get()), "mlp");
  EXPECT_STREQ(wf_session_device_name(s.get()), "cpu");
  EXPECT_EQ(wf_session_device_bytes_in_use(s.get()), (8 * 4 + 8 + 3 * 8 + 3) * sizeof(float));

  ASSERT_EQ(wf_session_num_inputs(s.get()), 1u);
  wf_tensor_info info;
  ASSERT_EQ(wf_session_input_info(s.get(), 0, &info), WF_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_STREQ(info.dtype, "f32");
  EXPECT_EQ(info.element_size, 4u);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 4);
  EXPECT_EQ(info.dim_names[0], nullptr);
  ASSERT_EQ(wf_session_num_outputs(s.get()), 2u);
  ASSERT_EQ(wf_session_output_info(s.get(), 1, &info), WF_OK);
  EXPECT_STREQ(info.name, "probs");
  size_t index = 99;
  ASSERT_EQ(wf_session_find_output(s.get(), "logits", &index), WF_OK);
  EXPECT_EQ(index, 0u);

  auto inputs = readSafetensors(fixture("mlp") + "/golden/inputs.safetensors");
  auto golden = readSafetensors(fixture("mlp") + "/golden/outputs.safetensors");
  const Tensor& x = inputs.at("x");
  ASSERT_EQ(x.bytes.size(), 2u * 4u * sizeof(float));

  // By name, outputs owned by the result.
  wf_input in{"x", 0, x.bytes.data(), x.bytes.size(), nullptr, 0};
  wf_result* result = nullptr;
  ASSERT_EQ(wf_session_run(s.get(), &in, 1, &result), WF_OK) << lastError();
  EXPECT_EQ(wf_last_error_code(), WF_OK);
  EXPECT_STREQ(wf_last_error_message(), "");
  ASSERT_EQ(wf_result_num_outputs(result), 2u);
  for (size_t i = 0; i < 2; ++i) {
    wf_tensor_view view;
    ASSERT_EQ(wf_result_output(result, i, &view), WF_OK);
    const Tensor& g = golden.at(view.name);
    ASSERT_EQ(view.size_bytes, g.bytes.size());
    ASSERT_EQ(view.rank, 2u);
    EXPECT_EQ(view.shape[0], 2);
    EXPECT_EQ(view.shape[1], 3);
    EXPECT_STREQ(view.dtype, "f32");
    expectClose(static_cast<const float*>(view.data), g, view.name);
  }
  // probs is the logistic of logits: the views point at the real outputs, in manifest order.
  wf_tensor_view logitsView, probs;
  ASSERT_EQ(wf_result_output(result, 0, &logitsView), WF_OK);
  ASSERT_EQ(wf_result_output(result, 1, &probs), WF_OK);
  EXPECT_STREQ(logitsView.name, "logits");
  const float* l = static_cast<const float*>(logitsView.data);
  const float* p = static_cast<const float*>(probs.data);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(p[i], 1.0 / (1.0 + std::exp(-l[i])), 1e-6) << i;
  float copy[6] = {};
  ASSERT_EQ(wf_result_copy_output(result, 1, copy, sizeof copy), WF_OK);
  EXPECT_EQ(std::memcmp(copy, probs.data, sizeof copy), 0);
  EXPECT_EQ(wf_result_copy_output(result, 1, copy, sizeof copy - 1), WF_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("needs 24 bytes"), std::string::npos) << lastError();
  EXPECT_EQ(wf_result_output(result, 2, &probs), WF_OUT_OF_RANGE);
  wf_run_report report;
  ASSERT_EQ(wf_result_report(result, &report), WF_OK);
  EXPECT_LT(report.device_ms, 0);  // no device clock on cpu
  EXPECT_GT(report.wall_ms, 0);
  EXPECT_EQ(report.num_host_fallback_ops, 0u);
  EXPECT_EQ(wf_result_host_fallback_op(result, 0), nullptr);
  wf_result_free(result);

  // By index, outputs into caller buffers (by name, in another order).
  wf_input byIndex{nullptr, 0, x.bytes.data(), x.bytes.size(), nullptr, 0};
  float logits[6] = {}, probs2[6] = {};
  wf_output_buffer outs[2] = {{"probs", 0, probs2, sizeof probs2, 0}, {nullptr, 0, logits, sizeof logits, 0}};
  ASSERT_EQ(wf_session_run_into(s.get(), &byIndex, 1, outs, 2, &report), WF_OK) << lastError();
  EXPECT_EQ(outs[0].size_bytes, sizeof probs2);
  expectClose(probs2, golden.at("probs"), "probs");
  expectClose(logits, golden.at("logits"), "logits");
}

TEST(CApi, BenchFillsEverySample) {
  SessionPtr s = openCpu(fixture("mlp"));
  ASSERT_TRUE(s);
  std::vector<double> wall(5, 0.0), device(5, 0.0);
  ASSERT_EQ(wf_session_bench(s.get(), 2, 5, wall.data(), device.data()), WF_OK) << lastError();
  for (int i = 0; i < 5; ++i) {
    EXPECT_GT(wall[i], 0) << i;
    EXPECT_EQ(device[i], -1) << i;
  }
  auto inputs = readSafetensors(fixture("mlp") + "/golden/inputs.safetensors");
  wf_input in{"x", 0, inputs.at("x").bytes.data(), inputs.at("x").bytes.size(), nullptr, 0};
  std::vector<double> wall2(3, 0.0);
  ASSERT_EQ(wf_session_bench_inputs(s.get(), &in, 1, 0, 3, wall2.data(), nullptr), WF_OK) << lastError();
  EXPECT_GT(wall2[2], 0);
  EXPECT_EQ(wf_session_bench(s.get(), -1, 3, nullptr, nullptr), WF_INVALID_ARGUMENT);
}

TEST(CApi, DynamicBatchTakesTheCallersShape) {
  SessionPtr s = openCpu(fixture("dyn"));
  ASSERT_TRUE(s);
  wf_tensor_info info;
  ASSERT_EQ(wf_session_input_info(s.get(), 0, &info), WF_OK);
  EXPECT_EQ(info.shape[0], -1);
  ASSERT_NE(info.dim_names[0], nullptr);
  EXPECT_STREQ(info.dim_names[0], "batch");
  EXPECT_EQ(info.dim_names[1], nullptr);

  auto inputs = readSafetensors(fixture("dyn") + "/golden/inputs.safetensors");
  auto golden = readSafetensors(fixture("dyn") + "/golden/outputs.safetensors");
  const Tensor &x = inputs.at("x"), &y = inputs.at("y");
  wf_input in[2] = {{"y", 0, y.bytes.data(), y.bytes.size(), y.shape.data(), y.shape.size()},
                    {"x", 0, x.bytes.data(), x.bytes.size(), x.shape.data(), x.shape.size()}};
  wf_result* result = nullptr;
  ASSERT_EQ(wf_session_run(s.get(), in, 2, &result), WF_OK) << lastError();
  wf_tensor_view out;
  ASSERT_EQ(wf_result_output(result, 0, &out), WF_OK);
  EXPECT_EQ(out.shape[0], x.shape[0]);
  expectClose(static_cast<const float*>(out.data), golden.at("out"), "out");
  wf_result_free(result);

  // Without a shape, a dynamic input is refused by name.
  in[1].shape = nullptr;
  EXPECT_EQ(wf_session_run(s.get(), in, 2, &result), WF_INVALID_ARGUMENT);
  EXPECT_EQ(result, nullptr);
  EXPECT_NE(lastError().find("input 'x' has dynamic dimensions"), std::string::npos) << lastError();
  // Batches that disagree between x and y.
  int64_t other[2] = {x.shape[0] + 1, 4};
  std::vector<float> bigger(static_cast<size_t>(other[0] * 4), 1.f);
  in[1] = {"x", 0, bigger.data(), bigger.size() * sizeof(float), other, 2};
  EXPECT_EQ(wf_session_run(s.get(), in, 2, &result), WF_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("batch"), std::string::npos) << lastError();
}

TEST(CApi, ErrorsAreStatusesWithMessages) {
  wf_session* s = reinterpret_cast<wf_session*>(0x1);
  // A missing package directory.
  EXPECT_EQ(wf_session_open(fixture("no_such_package").c_str(), nullptr, &s), WF_NOT_FOUND);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(wf_last_error_code(), WF_NOT_FOUND);
  EXPECT_NE(lastError().find("no_such_package"), std::string::npos) << lastError();

  // Bad device strings: malformed, and a kind this library lacks.
  wf_session_options options;
  wf_session_options_init(&options);
  for (const char* device : {"cuda:x", "CPU", ":0", "tpu:0"}) {
    options.device = device;
    wf_status status = wf_session_open(fixture("mlp").c_str(), &options, &s);
    EXPECT_NE(status, WF_OK) << device;
    EXPECT_EQ(s, nullptr) << device;
    EXPECT_NE(lastError().find(device), std::string::npos) << device << ": " << lastError();
  }
  options.device = "cpu";
  options.threads = -2;
  EXPECT_EQ(wf_session_open(fixture("mlp").c_str(), &options, &s), WF_INVALID_ARGUMENT);
  EXPECT_EQ(wf_session_open(fixture("mlp").c_str(), nullptr, nullptr), WF_INVALID_ARGUMENT);

  SessionPtr session = openCpu(fixture("mlp"));
  ASSERT_TRUE(session);
  std::vector<float> x(8, 0.5f);
  wf_result* result = reinterpret_cast<wf_result*>(0x1);
  // Wrong input size.
  wf_input shortInput{"x", 0, x.data(), 7 * sizeof(float), nullptr, 0};
  EXPECT_EQ(wf_session_run(session.get(), &shortInput, 1, &result), WF_INVALID_ARGUMENT);
  EXPECT_EQ(result, nullptr);
  EXPECT_NE(lastError().find("input 'x': 28 bytes given, 32 expected for tensor<2x4xf32>"), std::string::npos)
      << lastError();
  // A shape the manifest does not have, with a matching byte count.
  int64_t transposed[2] = {4, 2};
  wf_input wrongShape{"x", 0, x.data(), 8 * sizeof(float), transposed, 2};
  EXPECT_EQ(wf_session_run(session.get(), &wrongShape, 1, &result), WF_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("input 'x'"), std::string::npos) << lastError();
  // Unknown names and indices, missing inputs, NULL data.
  wf_input unknown{"z", 0, x.data(), 8 * sizeof(float), nullptr, 0};
  EXPECT_EQ(wf_session_run(session.get(), &unknown, 1, &result), WF_NOT_FOUND);
  EXPECT_NE(lastError().find("no input named 'z' (the package has: x)"), std::string::npos) << lastError();
  wf_input badIndex{nullptr, 3, x.data(), 8 * sizeof(float), nullptr, 0};
  EXPECT_EQ(wf_session_run(session.get(), &badIndex, 1, &result), WF_OUT_OF_RANGE);
  EXPECT_EQ(wf_session_run(session.get(), nullptr, 0, &result), WF_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("'x'"), std::string::npos) << lastError();
  wf_input noData{"x", 0, nullptr, 8 * sizeof(float), nullptr, 0};
  EXPECT_EQ(wf_session_run(session.get(), &noData, 1, &result), WF_INVALID_ARGUMENT);
  // A caller buffer too small: nothing is written.
  wf_input good{"x", 0, x.data(), 8 * sizeof(float), nullptr, 0};
  float logits[6] = {7, 7, 7, 7, 7, 7};
  float small[5] = {};
  wf_output_buffer outs[2] = {{"logits", 0, logits, sizeof logits, 0}, {"probs", 0, small, sizeof small, 0}};
  EXPECT_EQ(wf_session_run_into(session.get(), &good, 1, outs, 2, nullptr), WF_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("output 'probs'"), std::string::npos) << lastError();
  EXPECT_EQ(logits[0], 7.f);
  wf_output_buffer unknownOut{"nope", 0, logits, sizeof logits, 0};
  EXPECT_EQ(wf_session_run_into(session.get(), &good, 1, &unknownOut, 1, nullptr), WF_NOT_FOUND);
  // NULL handles are errors, never crashes.
  EXPECT_EQ(wf_session_run(nullptr, &good, 1, &result), WF_INVALID_ARGUMENT);
  EXPECT_EQ(wf_session_bench(nullptr, 0, 1, nullptr, nullptr), WF_INVALID_ARGUMENT);
  wf_tensor_info info;
  EXPECT_EQ(wf_session_input_info(session.get(), 1, &info), WF_OUT_OF_RANGE);
  EXPECT_EQ(wf_session_input_info(nullptr, 0, &info), WF_INVALID_ARGUMENT);
  EXPECT_EQ(wf_session_num_inputs(nullptr), 0u);
  wf_session_close(nullptr);
  wf_result_free(nullptr);
  // The error is per call: a good call clears it.
  ASSERT_EQ(wf_session_run(session.get(), &good, 1, &result), WF_OK) << lastError();
  EXPECT_STREQ(wf_last_error_message(), "");
  wf_result_free(result);
}

}  // namespace
