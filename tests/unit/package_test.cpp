// Model packages: manifest parsing, the manifest/model cross-check, weights and inputs, each bad
// case with the name of the tensor or field and of the file in the error.
#include "runtime/package.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "runtime/file_io.h"
#include "runtime/safetensors.h"

namespace wf {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path fixture(const std::string& name) { return fs::path(WF_SOURCE_DIR) / "tests" / "data" / "packages" / name; }

Literal f32(std::vector<int64_t> shape, float start = 0.f) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = start + static_cast<float>(i) * 0.25f;
  return l;
}

// A writable copy of a fixture package in a directory of its own, removed afterwards.
class PackageCopy {
 public:
  explicit PackageCopy(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("wf_pkg_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::copy(fixture(name), dir_, fs::copy_options::recursive);
  }
  ~PackageCopy() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir() const { return dir_.string(); }
  std::string file(const std::string& rel) const { return (dir_ / rel).string(); }

  json manifest() const { return json::parse(*readFileBytes(file("manifest.json"))); }
  void writeManifest(const json& j) const { writeText("manifest.json", j.dump(2)); }
  void writeText(const std::string& rel, const std::string& text) const {
    std::ofstream(file(rel), std::ios::trunc) << text;
  }
  SafetensorsFile weights() const { return *readSafetensors(file("weights.safetensors")); }
  void writeWeights(const SafetensorsFile& st) const { ASSERT_TRUE(writeSafetensors(file("weights.safetensors"), st).isOk()); }

 private:
  fs::path dir_;
};

// Opens the package after `edit` changed its manifest; returns the error message ("" if it opened).
template <typename Edit>
std::string openWithManifestEdit(const std::string& name, Edit edit) {
  PackageCopy pkg(name);
  json m = pkg.manifest();
  edit(m);
  pkg.writeManifest(m);
  auto opened = Package::open(pkg.dir());
  return opened ? "" : opened.status().message();
}

TEST(Package, OpensTheMlpFixture) {
  auto pkg = Package::open(fixture("mlp").string());
  ASSERT_TRUE(pkg) << pkg.status().message();
  const Manifest& m = pkg->manifest();
  EXPECT_EQ(m.name, "mlp");
  EXPECT_EQ(m.entry, "main");
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].name, "x");
  ASSERT_EQ(m.weights.size(), 4u);
  EXPECT_EQ(m.weights[2].name, "fc2.weight");
  EXPECT_EQ(m.weights[2].index, 3u);
  EXPECT_EQ(shapeToString(m.weights[2].shape), "[3, 8]");
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.outputs[1].name, "probs");
  ASSERT_EQ(m.activations.size(), 2u);
  EXPECT_EQ(m.activations[0].value, "%h1");
  EXPECT_EQ(m.tolerances.kind, Tolerances::Kind::kElementwise);
  EXPECT_DOUBLE_EQ(m.tolerances.rtol, 1e-3);
  EXPECT_EQ(m.tolerances.toString(), "rtol=0.001 atol=1e-05");
  EXPECT_EQ(FuncOp(&pkg->entry()).symName(), "main");

  auto weights = pkg->loadWeights();
  ASSERT_TRUE(weights) << weights.status().message();
  ASSERT_EQ(weights->size(), 4u);
  EXPECT_EQ((*weights)[0].type().toString(), "tensor<8x4xf32>");
  EXPECT_EQ((*weights)[3].type().toString(), "tensor<3xf32>");

  auto golden = pkg->loadGoldenInputs();
  ASSERT_TRUE(golden) << golden.status().message();
  auto args = pkg->checkInputs(*golden);
  ASSERT_TRUE(args) << args.status().message();
  EXPECT_EQ(args->size(), 1u);
}

TEST(Package, DynamicDimsAcceptAnySizeConsistently) {
  auto pkg = Package::open(fixture("dyn").string());
  ASSERT_TRUE(pkg) << pkg.status().message();
  EXPECT_EQ(shapeToString(pkg->manifest().inputs[0].shape), "[batch, 4]");
  for (int64_t batch : {1, 5, 64}) {
    std::vector<NamedLiteral> in = {{"y", f32({batch, 3})}, {"x", f32({batch, 4})}};
    DimBindings dims;
    auto args = pkg->checkInputs(in, &dims);
    ASSERT_TRUE(args) << args.status().message();
    EXPECT_EQ(dims["batch"], batch);
    // Argument order: x (argument 0) before y (argument 1), whatever order they were given in.
    ASSERT_EQ(args->size(), 2u);
    EXPECT_EQ((*args)[0].shape()[1], 4);
    EXPECT_EQ((*args)[1].shape()[1], 3);
  }
  std::vector<NamedLiteral> mixed = {{"x", f32({2, 4})}, {"y", f32({3, 3})}};
  auto r = pkg->checkInputs(mixed);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("input 'y'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'batch'"), std::string::npos) << r.status().message();

  std::vector<NamedLiteral> empty = {{"x", f32({0, 4})}, {"y", f32({0, 3})}};
  r = pkg->checkInputs(empty);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("below its minimum 1"), std::string::npos) << r.status().message();
  std::vector<NamedLiteral> big = {{"x", f32({65, 4})}, {"y", f32({65, 3})}};
  r = pkg->checkInputs(big);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("above its maximum 64"), std::string::npos) << r.status().message();
}

TEST(Package, BadInputsNameTheInput) {
  auto pkg = Package::open(fixture("mlp").string());
  ASSERT_TRUE(pkg) << pkg.status().message();
  auto expectError = [&](std::vector<NamedLiteral> inputs, std::vector<std::string> needles) {
    auto r = pkg->checkInputs(inputs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    for (const std::string& n : needles) EXPECT_NE(r.status().message().find(n), std::string::npos) << r.status().message();
  };
  Literal f64 = Literal::zeros(Type::tensor({2, 4}, ElementType::kF64));
  expectError({{"x", f64}}, {"input 'x'", "expected dtype f32, got f64"});
  expectError({{"x", f32({4, 2})}}, {"input 'x'", "expected shape [2, 4]", "tensor<4x2xf32>"});
  expectError({{"x", f32({2, 4, 1})}}, {"input 'x'", "rank 3"});
  expectError({}, {"missing inputs", "'x' f32[2, 4]"});
  expectError({{"x", f32({2, 4})}, {"z", f32({1})}}, {"input 'z' is not an input", "'x'"});
  expectError({{"x", f32({2, 4})}, {"x", f32({2, 4})}}, {"input 'x' is given twice"});
}

TEST(Package, MissingWeightNamesTensorAndFile) {
  PackageCopy pkg("mlp");
  SafetensorsFile st = pkg.weights();
  st.tensors.erase(st.tensors.begin() + 3);  // fc2.bias
  pkg.writeWeights(st);
  auto opened = Package::open(pkg.dir());
  ASSERT_TRUE(opened) << opened.status().message();  // weights are read on demand
  auto w = opened->loadWeights();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("weight 'fc2.bias' is missing from " + pkg.file("weights.safetensors")),
            std::string::npos)
      << w.status().message();
}

TEST(Package, MisShapedAndMisTypedWeightsNameTensorAndFile) {
  {
    PackageCopy pkg("mlp");
    SafetensorsFile st = pkg.weights();
    st.tensors[0].value = f32({4, 8});  // fc1.weight transposed
    pkg.writeWeights(st);
    auto w = Package::open(pkg.dir())->loadWeights();
    ASSERT_FALSE(w);
    EXPECT_NE(w.status().message().find("weight 'fc1.weight' in " + pkg.file("weights.safetensors")),
              std::string::npos)
        << w.status().message();
    EXPECT_NE(w.status().message().find("expected shape [8, 4], got tensor<4x8xf32>"), std::string::npos)
        << w.status().message();
  }
  {
    PackageCopy pkg("mlp");
    SafetensorsFile st = pkg.weights();
    st.tensors[1].value = Literal::zeros(Type::tensor({8}, ElementType::kF64));  // fc1.bias as f64
    pkg.writeWeights(st);
    auto w = Package::open(pkg.dir())->loadWeights();
    ASSERT_FALSE(w);
    EXPECT_NE(w.status().message().find("weight 'fc1.bias'"), std::string::npos) << w.status().message();
    EXPECT_NE(w.status().message().find("expected dtype f32, got f64"), std::string::npos) << w.status().message();
  }
  {
    PackageCopy pkg("mlp");
    fs::remove(pkg.file("weights.safetensors"));
    auto w = Package::open(pkg.dir())->loadWeights();
    ASSERT_FALSE(w);
    EXPECT_NE(w.status().message().find("weights.safetensors"), std::string::npos) << w.status().message();
  }
}

TEST(Package, BadManifestsNameTheFieldAndFile) {
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* needle;
  };
  const Case cases[] = {
      {"format", [](json& m) { m["format"] = "other"; }, "format: expected \"warpforge.package\""},
      {"version", [](json& m) { m["format_version"] = 2; }, "format_version: this WarpForge reads version 1, got 2"},
      {"no entry", [](json& m) { m.erase("entry"); }, "entry: missing"},
      {"dtype", [](json& m) { m["inputs"][0]["dtype"] = "f33"; }, "inputs[0].dtype: unknown element type 'f33'"},
      {"shape", [](json& m) { m["inputs"][0]["shape"] = json::array({2, -4}); }, "inputs[0].shape[1]: expected a size"},
      {"no outputs", [](json& m) { m.erase("outputs"); }, "outputs: missing (expected an array)"},
      {"argument type", [](json& m) { m["weights"][0]["argument"] = "one"; }, "weights[0].argument: expected an integer"},
      {"kind", [](json& m) { m["weights"][0]["kind"] = "param"; }, "weights[0].kind: expected parameter, buffer or constant"},
      {"dup name", [](json& m) { m["weights"][1]["name"] = "fc1.weight"; }, "weights[1].name: 'fc1.weight' appears twice"},
      {"undeclared dim", [](json& m) { m["inputs"][0]["shape"][0] = "batch"; }, "dynamic dimension 'batch' is not declared"},
      {"tolerances", [](json& m) { m["tolerances"]["rel_l2"] = 0.01; }, "tolerances: give either rtol/atol or rel_l2"},
      {"negative tol", [](json& m) { m["tolerances"]["rtol"] = -1; }, "tolerances.rtol: expected a finite number >= 0"},
      {"golden path", [](json& m) { m["golden"]["outputs"] = "../elsewhere.safetensors"; }, "golden.outputs: '../elsewhere.safetensors' must be a path inside the package"},
      {"dyn bounds", [](json& m) { m["dynamic_dims"]["b"] = {{"min", 4}, {"max", 2}}; }, "dynamic_dims.b.max: is below min 4"},
  };
  for (const Case& c : cases) {
    std::string message = openWithManifestEdit("mlp", c.edit);
    EXPECT_NE(message.find("manifest.json: "), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.what << ": " << message;
  }
  PackageCopy pkg("mlp");
  pkg.writeText("manifest.json", "{\"format\": \"warpforge.package\",");
  auto opened = Package::open(pkg.dir());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.status().message().find("manifest.json: not valid JSON"), std::string::npos)
      << opened.status().message();
  fs::remove(pkg.file("manifest.json"));
  opened = Package::open(pkg.dir());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.status().code(), StatusCode::kNotFound);
  EXPECT_NE(opened.status().message().find("is not a model package"), std::string::npos);
  EXPECT_FALSE(Package::open(pkg.file("no_such_dir")));
}

TEST(Package, ManifestThatDisagreesWithModelIsRefused) {
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    std::vector<std::string> needles;
  };
  const Case cases[] = {
      {"entry", [](json& m) { m["entry"] = "forward"; }, {"entry @forward is not a function of the model"}},
      {"uncovered argument", [](json& m) { m["weights"].erase(3); },
       {"argument 4 of @main (tensor<3xf32>) is neither an input nor a weight"}},
      {"argument out of range", [](json& m) { m["weights"][3]["argument"] = 9; },
       {"weight 'fc2.bias' is argument 9, but @main takes 5 arguments"}},
      {"argument twice", [](json& m) { m["weights"][3]["argument"] = 0; },
       {"weight 'fc2.bias' and input 'x' are both argument 0"}},
      {"input dtype", [](json& m) { m["inputs"][0]["dtype"] = "f64"; },
       {"input 'x': argument 0 of @main has element type f32", "the manifest says f64"}},
      {"weight shape", [](json& m) { m["weights"][0]["shape"] = json::array({4, 8}); },
       {"weight 'fc1.weight'", "tensor<8x4xf32>", "[4, 8]"}},
      {"dynamic vs static", [](json& m) {
         m["dynamic_dims"]["batch"] = {{"min", 1}, {"max", nullptr}};
         m["inputs"][0]["shape"][0] = "batch";
       },
       {"input 'x'", "dimension 0 is static there", "dynamic ('batch')"}},
      {"output count", [](json& m) { m["outputs"].erase(1); }, {"result 1 of @main has no output in the manifest"}},
      {"output index", [](json& m) { m["outputs"][1]["result"] = 2; }, {"output 'probs' is result 2, but @main returns 2"}},
      {"output shape", [](json& m) { m["outputs"][0]["shape"] = json::array({2, 4}); }, {"output 'logits'", "tensor<2x3xf32>"}},
      {"activation value", [](json& m) { m["activations"][0]["value"] = "%nope"; },
       {"activation 'fc1'", "no value %nope in the body of @main"}},
      {"activation type", [](json& m) { m["activations"][1]["shape"] = json::array({2, 8}); },
       {"activation 'fc2'", "value %logits is tensor<2x3xf32>"}},
  };
  for (const Case& c : cases) {
    std::string message = openWithManifestEdit("mlp", c.edit);
    EXPECT_NE(message.find("manifest.json does not match "), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find("model.mlir"), std::string::npos) << c.what << ": " << message;
    for (const std::string& n : c.needles) EXPECT_NE(message.find(n), std::string::npos) << c.what << ": " << message;
  }
}

TEST(Package, MalformedModelNamesFileLineCol) {
  PackageCopy pkg("mlp");
  pkg.writeText("model.mlir", "func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {\n  return %y : tensor<2x4xf32>\n}\n");
  auto opened = Package::open(pkg.dir());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.status().message().find(pkg.file("model.mlir") + ":2:"), std::string::npos)
      << opened.status().message();
}

TEST(Package, ToleranceDefaultsFollowTheExportDtype) {
  const char* base = R"({"format": "warpforge.package", "format_version": 1, "entry": "main",
                         "inputs": [], "outputs": [], "dtype": "%s"})";
  char text[512];
  std::snprintf(text, sizeof text, base, "bf16");
  auto m = Manifest::parse(text, "m.json");
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_EQ(m->tolerances.kind, Tolerances::Kind::kRelL2);
  EXPECT_DOUBLE_EQ(m->tolerances.relL2, 1e-2);
  std::snprintf(text, sizeof text, base, "f32");
  m = Manifest::parse(text, "m.json");
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_EQ(m->tolerances.kind, Tolerances::Kind::kElementwise);
  EXPECT_DOUBLE_EQ(m->tolerances.atol, 1e-5);
}

}  // namespace
}  // namespace wf
