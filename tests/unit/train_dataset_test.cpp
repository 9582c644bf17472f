// wf::train::Sampler (against the table the Python implementation writes,
// tests/data/train/sampler_expected.json) and wf::train::Dataset (features files).
#include "train/dataset.h"
#include "train/sampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "runtime/safetensors.h"

namespace wf::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json samplerTable() {
  std::ifstream in(fs::path(WF_SOURCE_DIR) / "tests" / "data" / "train" / "sampler_expected.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

TEST(Sampler, SplitMix64MatchesPython) {
  json table = samplerTable();
  ASSERT_FALSE(table["splitmix64"].empty());
  for (const json& c : table["splitmix64"]) {
    SplitMix64 g(c["seed"].get<uint64_t>());
    for (const json& v : c["outputs"]) EXPECT_EQ(g.next(), v.get<uint64_t>()) << c.dump();
  }
  for (const json& c : table["uniform"]) {
    SplitMix64 g(c["seed"].get<uint64_t>());
    const uint64_t bound = c["bound"].get<uint64_t>();
    for (const json& v : c["outputs"]) EXPECT_EQ(g.uniform(bound), v.get<uint64_t>()) << c.dump();
  }
}

TEST(Sampler, PermutationsMatchPython) {
  json table = samplerTable();
  ASSERT_GE(table["permutations"].size(), 5u);
  for (const json& c : table["permutations"]) {
    auto p = epochPermutation(c["seed"].get<uint64_t>(), c["epoch"].get<uint64_t>(), c["n"].get<int64_t>());
    EXPECT_EQ(p, c["permutation"].get<std::vector<int64_t>>()) << c["seed"] << " " << c["epoch"] << " " << c["n"];
  }
  for (const json& c : table["large"]) {
    const int64_t n = c["n"].get<int64_t>();
    auto p = epochPermutation(c["seed"].get<uint64_t>(), c["epoch"].get<uint64_t>(), n);
    ASSERT_EQ(static_cast<int64_t>(p.size()), n);
    EXPECT_EQ(std::vector<int64_t>(p.begin(), p.begin() + 8), c["head"].get<std::vector<int64_t>>());
    EXPECT_EQ(std::vector<int64_t>(p.end() - 8, p.end()), c["tail"].get<std::vector<int64_t>>());
    int64_t weighted = 0;
    for (int64_t i = 0; i < n; ++i) weighted += i * p[static_cast<size_t>(i)];
    EXPECT_EQ(weighted, c["weighted_sum"].get<int64_t>());
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
  }
}

TEST(Sampler, BatchesAndShardsMatchPython) {
  json table = samplerTable();
  ASSERT_GE(table["batches"].size(), 5u);
  for (const json& c : table["batches"]) {
    SamplerOptions o;
    o.numExamples = c["n"].get<int64_t>();
    o.batchSize = c["batch_size"].get<int64_t>();
    o.seed = c["seed"].get<uint64_t>();
    o.shuffle = c["shuffle"].get<bool>();
    o.dropLast = c["drop_last"].get<bool>();
    o.rank = c["rank"].get<int64_t>();
    o.worldSize = c["world_size"].get<int64_t>();
    auto sampler = Sampler::create(o);
    ASSERT_TRUE(sampler) << sampler.status().toString();
    const uint64_t epoch = c["epoch"].get<uint64_t>();
    auto expected = c["batches"].get<std::vector<std::vector<int64_t>>>();
    EXPECT_EQ(sampler->epochBatches(epoch), expected) << c.dump();
    EXPECT_EQ(sampler->numBatches(), static_cast<int64_t>(expected.size()));
    for (int64_t b = 0; b < sampler->numBatches(); ++b) EXPECT_EQ(sampler->batch(epoch, b), expected[static_cast<size_t>(b)]);
  }
}

TEST(Sampler, ShuffleOffAndEpochsDiffer) {
  auto plain = Sampler::create({.numExamples = 7, .batchSize = 3, .shuffle = false});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->epochBatches(5), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  auto shuffled = Sampler::create({.numExamples = 50, .batchSize = 50, .seed = 3});
  ASSERT_TRUE(shuffled);
  EXPECT_NE(shuffled->epochIndices(0), shuffled->epochIndices(1));
  auto other = Sampler::create({.numExamples = 50, .batchSize = 50, .seed = 4});
  EXPECT_NE(shuffled->epochIndices(0), other->epochIndices(0));
}

TEST(Sampler, RejectsBadOptions) {
  EXPECT_FALSE(Sampler::create({.numExamples = 5, .batchSize = 0}));
  auto bad = Sampler::create({.numExamples = 5, .batchSize = 2, .rank = 2, .worldSize = 2});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("rank 2"), std::string::npos);
  EXPECT_FALSE(Sampler::create({.numExamples = -1, .batchSize = 2}));
}

}  // namespace
}  // namespace wf::train

namespace wf::train {
namespace {

// A random integer tensor with values in [lo, hi).
Literal randomInts(ElementType t, std::vector<int64_t> shape, int64_t lo, int64_t hi, std::mt19937_64& rng) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), t));
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  for (int64_t i = 0; i < l.numElements(); ++i) l.setInt(i, dist(rng));
  return l;
}

Literal randomFloats(std::vector<int64_t> shape, std::mt19937_64& rng) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  std::normal_distribution<float> dist(0.f, 1.f);
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = dist(rng);
  return l;
}

struct Features {
  SafetensorsFile file;
  std::string path;
};

// A features file of n examples of sequence length seq, as `squad features` writes it, plus an
// f32 extra and an i32 tensor.
Features makeFeatures(int64_t n, int64_t seq, uint64_t seed, const std::string& name) {
  std::mt19937_64 rng(seed);
  Features f;
  f.file.tensors.push_back({"input_ids", randomInts(ElementType::kSI64, {n, seq}, 0, 1000, rng)});
  f.file.tensors.push_back({"token_type_ids", randomInts(ElementType::kSI64, {n, seq}, 0, 2, rng)});
  f.file.tensors.push_back({"attention_mask", randomInts(ElementType::kSI64, {n, seq}, 0, 2, rng)});
  f.file.tensors.push_back({"start_positions", randomInts(ElementType::kSI64, {n}, 0, seq, rng)});
  f.file.tensors.push_back({"end_positions", randomInts(ElementType::kSI64, {n}, 0, seq, rng)});
  f.file.tensors.push_back({"offset_mapping", randomInts(ElementType::kSI64, {n, seq, 2}, -1, 500, rng)});
  f.file.tensors.push_back({"weights", randomFloats({n, 3}, rng)});
  f.file.tensors.push_back({"example_index", randomInts(ElementType::kSI32, {n}, 0, n, rng)});
  f.file.metadata["format"] = "warpforge.features";
  f.path = (fs::path(::testing::TempDir()) / name).string();
  EXPECT_TRUE(writeSafetensors(f.path, f.file).isOk());
  return f;
}

std::vector<BatchArgument> bertArguments(int64_t seq) {
  return {{"input_ids", ElementType::kSI64, {seq}},
          {"token_type_ids", ElementType::kSI64, {seq}},
          {"attention_mask", ElementType::kSI64, {seq}},
          {"start_positions", ElementType::kSI64, {}},
          {"end_positions", ElementType::kSI64, {}}};
}

TEST(Dataset, GathersBatchesInArgumentOrder) {
  const int64_t n = 37, seq = 11;
  Features f = makeFeatures(n, seq, 1, "dataset_gather.safetensors");
  auto data = Dataset::open(f.path);
  ASSERT_TRUE(data) << data.status().toString();
  EXPECT_EQ(data->size(), n);
  EXPECT_EQ(data->tensors().size(), 8u);
  EXPECT_EQ(data->metadata().at("format"), "warpforge.features");
  // Bound in an order other than the file's.
  std::vector<BatchArgument> args = bertArguments(seq);
  std::swap(args[0], args[4]);
  ASSERT_TRUE(data->bind(args).isOk());
  const std::vector<int64_t> indices = {5, 0, 36, 5, 17, 2, 30};
  auto batch = data->batch(indices);
  ASSERT_TRUE(batch) << batch.status().toString();
  ASSERT_EQ(batch->size(), args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    const Literal& got = (*batch)[a];
    const Literal* all = f.file.find(args[a].name);
    ASSERT_NE(all, nullptr);
    std::vector<int64_t> shape = all->shape();
    shape[0] = static_cast<int64_t>(indices.size());
    EXPECT_EQ(got.shape(), shape) << args[a].name;
    EXPECT_EQ(got.elementType(), ElementType::kSI64);
    const int64_t row = got.numElements() / static_cast<int64_t>(indices.size());
    for (size_t i = 0; i < indices.size(); ++i)
      for (int64_t k = 0; k < row; ++k)
        ASSERT_EQ(got.getInt(static_cast<int64_t>(i) * row + k), all->getInt(indices[i] * row + k)) << args[a].name;
  }
  // Extras: any tensor by name, whole or by rows.
  auto offsets = data->gather("offset_mapping", std::vector<int64_t>{3, 1});
  ASSERT_TRUE(offsets);
  EXPECT_EQ(offsets->shape(), (std::vector<int64_t>{2, seq, 2}));
  const Literal* om = f.file.find("offset_mapping");
  for (int64_t k = 0; k < seq * 2; ++k) {
    EXPECT_EQ(offsets->getInt(k), om->getInt(3 * seq * 2 + k));
    EXPECT_EQ(offsets->getInt(seq * 2 + k), om->getInt(seq * 2 + k));
  }
  auto weights = data->tensor("weights");
  ASSERT_TRUE(weights);
  EXPECT_TRUE(weights->bitwiseEqual(*f.file.find("weights")));
  auto ex = data->tensor("example_index");
  ASSERT_TRUE(ex);
  EXPECT_TRUE(ex->bitwiseEqual(*f.file.find("example_index")));
}

TEST(Dataset, BindChecksNamesDtypesAndShapes) {
  Features f = makeFeatures(9, 8, 2, "dataset_bind.safetensors");
  auto data = Dataset::open(f.path);
  ASSERT_TRUE(data) << data.status().toString();
  EXPECT_FALSE(data->batch(std::vector<int64_t>{0}));  // nothing bound yet

  auto missing = bertArguments(8);
  missing[1].name = "segment_ids";
  Status s = data->bind(missing);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("segment_ids"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(f.path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("input_ids"), std::string::npos) << s.message();  // lists what the file holds

  auto wrongType = bertArguments(8);
  wrongType[0].dtype = ElementType::kSI32;
  s = data->bind(wrongType);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("'input_ids' is I64"), std::string::npos) << s.message();

  s = data->bind(bertArguments(16));
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("shape [8]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[16]"), std::string::npos) << s.message();

  auto scalarVsVector = bertArguments(8);
  scalarVsVector[3].exampleShape = {1};
  EXPECT_FALSE(data->bind(scalarVsVector).isOk());

  // A dynamic dimension in the program's example shape takes any size.
  auto dynamic = bertArguments(-1);
  EXPECT_TRUE(data->bind(dynamic).isOk());

  auto arg = BatchArgument::fromProgramArgument("input_ids", ElementType::kSI64, {4, 8});
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->exampleShape, (std::vector<int64_t>{8}));
  EXPECT_FALSE(BatchArgument::fromProgramArgument("loss_scale", ElementType::kF32, {}));
}

TEST(Dataset, BadIndicesAndRanges) {
  const int64_t seq = 10;
  Features f = makeFeatures(12, seq, 3, "dataset_range.safetensors");
  auto data = Dataset::open(f.path);
  ASSERT_TRUE(data);
  ASSERT_TRUE(data->bind(bertArguments(seq)).isOk());
  auto bad = data->batch(std::vector<int64_t>{1, 12});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("example index 12"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(data->batch(std::vector<int64_t>{-1}));
  EXPECT_FALSE(data->gather("nope", std::vector<int64_t>{0}));

  EXPECT_TRUE(data->checkRange("start_positions", 0, seq).isOk());
  EXPECT_TRUE(data->checkRange("input_ids", 0, 1000).isOk());
  EXPECT_TRUE(data->checkRange("offset_mapping", -1, 500).isOk());
  EXPECT_TRUE(data->checkRange("example_index", 0, 12).isOk());

  // Put a bad label into example 7 and a bad offset into example 4, token 3, second column.
  SafetensorsFile file = f.file;
  Literal start = file.tensors[3].value.clone();
  start.setInt(7, seq);
  file.tensors[3].value = start;
  Literal om = file.tensors[5].value.clone();
  om.setInt((4 * seq + 3) * 2 + 1, -5);
  file.tensors[5].value = om;
  const std::string path = (fs::path(::testing::TempDir()) / "dataset_range_bad.safetensors").string();
  ASSERT_TRUE(writeSafetensors(path, file).isOk());
  auto badData = Dataset::open(path);
  ASSERT_TRUE(badData);
  Status s = badData->checkRange("start_positions", 0, seq);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), path + ": tensor 'start_positions': example 7 holds 10, outside [0, 10)");
  s = badData->checkRange("offset_mapping", -1, 500);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), path + ": tensor 'offset_mapping': example 4 holds -5 at [3, 1], outside [-1, 500)");
  s = badData->checkRange("weights", 0, 1);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("not an integer tensor"), std::string::npos);
}

TEST(Dataset, RefusesInconsistentFiles) {
  std::mt19937_64 rng(4);
  auto write = [](const std::string& name, const SafetensorsFile& file) {
    const std::string path = (fs::path(::testing::TempDir()) / name).string();
    EXPECT_TRUE(writeSafetensors(path, file).isOk());
    return path;
  };
  SafetensorsFile counts;
  counts.tensors.push_back({"input_ids", randomInts(ElementType::kSI64, {6, 4}, 0, 9, rng)});
  counts.tensors.push_back({"start_positions", randomInts(ElementType::kSI64, {5}, 0, 4, rng)});
  auto d = Dataset::open(write("dataset_counts.safetensors", counts));
  ASSERT_FALSE(d);
  EXPECT_NE(d.status().message().find("'start_positions' holds 5 examples"), std::string::npos) << d.status().message();

  SafetensorsFile scalar;
  scalar.tensors.push_back({"input_ids", randomInts(ElementType::kSI64, {6, 4}, 0, 9, rng)});
  scalar.tensors.push_back({"seed", Literal::scalarInt(ElementType::kSI64, 3)});
  d = Dataset::open(write("dataset_scalar.safetensors", scalar));
  ASSERT_FALSE(d);
  EXPECT_NE(d.status().message().find("'seed'"), std::string::npos) << d.status().message();

  SafetensorsFile empty;
  empty.tensors.push_back({"input_ids", Literal::zeros(Type::tensor({0, 4}, ElementType::kSI64))});
  d = Dataset::open(write("dataset_empty.safetensors", empty));
  ASSERT_FALSE(d);
  EXPECT_NE(d.status().message().find("no examples"), std::string::npos) << d.status().message();

  EXPECT_FALSE(Dataset::open((fs::path(::testing::TempDir()) / "no_such_features.safetensors").string()));
  EXPECT_FALSE(Dataset::fromBytes("not safetensors at all", "junk"));
  // A truncated file: the header promises more data than there is.
  SafetensorsFile ok;
  ok.tensors.push_back({"input_ids", randomInts(ElementType::kSI64, {3, 4}, 0, 9, rng)});
  auto bytes = encodeSafetensors(ok);
  ASSERT_TRUE(bytes);
  auto truncated = Dataset::fromBytes(bytes->substr(0, bytes->size() - 8), "truncated.safetensors");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.status().message().find("truncated.safetensors: tensor 'input_ids'"), std::string::npos)
      << truncated.status().message();
  auto whole = Dataset::fromBytes(*bytes, "whole.safetensors");
  ASSERT_TRUE(whole) << whole.status().toString();
  EXPECT_EQ(whole->size(), 3);
}

}  // namespace
}  // namespace wf::train
