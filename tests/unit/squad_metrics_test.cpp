// wf::train SQuAD v1.1 postprocessing and metric against Python's (warpforge.data.squad), on the
// fixture python/tests/test_train_data.py writes (tests/data/train/squad_metrics_fixture.json):
// Unicode answers, random float32 logits (ties included), several features per example.
#include "train/squad_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "runtime/safetensors.h"

namespace wf::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json& fixture() {
  static const json j = [] {
    std::ifstream in(fs::path(WF_SOURCE_DIR) / "tests" / "data" / "train" / "squad_metrics_fixture.json");
    EXPECT_TRUE(in.good());
    return json::parse(in);
  }();
  return j;
}

TEST(SquadMetrics, NormalizeAnswerMatchesPython) {
  const json& cases = fixture()["normalize"];
  ASSERT_GT(cases.size(), 300u);
  int failures = 0;
  for (const json& c : cases) {
    const std::string text = c[0].get<std::string>(), expected = c[1].get<std::string>();
    const std::string got = squadNormalizeAnswer(text);
    EXPECT_EQ(got, expected) << "text: " << text;
    if (got != expected && ++failures > 10) break;
  }
}

TEST(SquadMetrics, NormalizeAnswerByHand) {
  EXPECT_EQ(squadNormalizeAnswer("  an   apple,  a pear!  "), "apple pear");
  EXPECT_EQ(squadNormalizeAnswer("Theatre of the Absurd"), "theatre of absurd");
  EXPECT_EQ(squadNormalizeAnswer("U.S.A."), "usa");
  EXPECT_EQ(squadNormalizeAnswer("the (1990s)"), "1990s");
  EXPECT_EQ(squadNormalizeAnswer("A"), "");
  // Unicode: lowercase, \b next to accented letters, no-break space, final sigma.
  EXPECT_EQ(squadNormalizeAnswer("\xC3\x89" "a the\xC2\xA0" "\xC3\x89" "COLE"), "\xC3\xA9" "a \xC3\xA9" "cole");
  EXPECT_EQ(squadNormalizeAnswer("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3"), "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82");  // ΟΔΟΣ -> οδος
  EXPECT_EQ(squadNormalizeAnswer("\xC4\xB0"), "i\xCC\x87");  // U+0130 -> i + U+0307
  EXPECT_EQ(squadNormalizeAnswer("caf\xC3\xA9\xFF" "B"), "caf\xC3\xA9\xEF\xBF\xBD" "b");  // a bad byte reads as U+FFFD
}

TEST(SquadMetrics, F1AndExactMatchMatchPython) {
  const json& cases = fixture()["f1"];
  ASSERT_GT(cases.size(), 100u);
  int nonTrivial = 0;
  for (const json& c : cases) {
    const std::string a = c[0].get<std::string>(), b = c[1].get<std::string>();
    EXPECT_EQ(squadF1(a, b), c[2].get<double>()) << a << " | " << b;
    EXPECT_EQ(squadExactMatch(a, b), c[3].get<bool>()) << a << " | " << b;
    double f = c[2].get<double>();
    nonTrivial += f > 0 && f < 1;
  }
  EXPECT_GT(nonTrivial, 10);
  EXPECT_DOUBLE_EQ(squadF1("the cat sat on the mat", "cat on mat"), 6.0 / 7.0);
  EXPECT_EQ(squadF1("the", "a"), 0.0);
  EXPECT_TRUE(squadExactMatch("the", "a"));
}

std::vector<SquadExample> examplesOf(const json& c) {
  std::vector<SquadExample> out;
  for (const json& e : c["examples"])
    out.push_back({e["id"].get<std::string>(), e["context"].get<std::string>(), e["answers"].get<std::vector<std::string>>()});
  return out;
}

std::vector<int64_t> flatOffsets(const json& c) {
  std::vector<int64_t> out;
  for (const json& row : c["offset_mapping"])
    for (const json& pair : row) {
      out.push_back(pair[0].get<int64_t>());
      out.push_back(pair[1].get<int64_t>());
    }
  return out;
}

std::vector<float> floats(const json& values) {
  std::vector<float> out;
  for (const json& v : values) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

TEST(SquadMetrics, PostprocessingAndScoresMatchPython) {
  const json& cases = fixture()["postprocess"];
  ASSERT_GE(cases.size(), 4u);
  for (const json& c : cases) {
    std::vector<SquadExample> examples = examplesOf(c);
    std::vector<int64_t> index = c["example_index"].get<std::vector<int64_t>>();
    std::vector<int64_t> offsets = flatOffsets(c);
    std::vector<float> start = floats(c["start_logits"]), end = floats(c["end_logits"]);
    SquadPostprocessOptions opts{c["n_best"].get<int64_t>(), c["max_answer_length"].get<int64_t>()};
    auto preds = squadPredictions(examples, index, offsets, c["seq_len"].get<int64_t>(), start, end, opts);
    ASSERT_TRUE(preds) << preds.status().toString();
    EXPECT_EQ(*preds, c["predictions"].get<std::vector<std::string>>());
    auto scores = squadV1Scores(examples, *preds);
    ASSERT_TRUE(scores);
    EXPECT_EQ(scores->exactMatch, c["exact_match"].get<double>());
    EXPECT_EQ(scores->f1, c["f1"].get<double>());
    EXPECT_EQ(scores->questions, static_cast<int64_t>(examples.size()));
  }
}

TEST(SquadMetrics, PostprocessingErrors) {
  const json& c = fixture()["postprocess"][0];
  std::vector<SquadExample> examples = examplesOf(c);
  std::vector<int64_t> index = c["example_index"].get<std::vector<int64_t>>();
  std::vector<int64_t> offsets = flatOffsets(c);
  std::vector<float> start = floats(c["start_logits"]), end = floats(c["end_logits"]);
  const int64_t seq = c["seq_len"].get<int64_t>();
  start[3 * static_cast<size_t>(seq) + 5] = std::nanf("");
  auto bad = squadPredictions(examples, index, offsets, seq, start, end);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("feature 3 has a non-finite start logit at token 5"), std::string::npos)
      << bad.status().message();
  std::vector<float> shortLogits(start.begin(), start.end() - 1);
  EXPECT_FALSE(squadPredictions(examples, index, offsets, seq, shortLogits, end));
  index[1] = static_cast<int64_t>(examples.size());
  EXPECT_FALSE(squadPredictions(examples, index, offsets, seq, floats(c["start_logits"]), end));
  EXPECT_FALSE(squadV1Scores(examples, {"x"}));
}

// The same fixture through files: an eval features file and its examples file, as
// `squad features --eval` writes them, and logits as Literals.
TEST(SquadMetrics, EvalSetFromFiles) {
  const json& c = fixture()["postprocess"][2];
  const int64_t seq = c["seq_len"].get<int64_t>();
  std::vector<int64_t> index = c["example_index"].get<std::vector<int64_t>>();
  const int64_t n = static_cast<int64_t>(index.size());
  std::vector<int64_t> offsets = flatOffsets(c);
  SafetensorsFile file;
  Literal ids = Literal::zeros(Type::tensor({n, seq}, ElementType::kSI64));
  std::mt19937 rng(5);
  for (int64_t i = 0; i < ids.numElements(); ++i) ids.setInt(i, static_cast<int64_t>(rng() % 1000));
  Literal ex = Literal::zeros(Type::tensor({n}, ElementType::kSI64));
  for (int64_t i = 0; i < n; ++i) ex.setInt(i, index[static_cast<size_t>(i)]);
  Literal om = Literal::zeros(Type::tensor({n, seq, 2}, ElementType::kSI64));
  for (size_t i = 0; i < offsets.size(); ++i) om.setInt(static_cast<int64_t>(i), offsets[i]);
  file.tensors = {{"input_ids", ids}, {"example_index", ex}, {"offset_mapping", om}};
  const std::string path = (fs::path(::testing::TempDir()) / "squad_eval_features.safetensors").string();
  ASSERT_TRUE(writeSafetensors(path, file).isOk());
  json doc = {{"format", "warpforge.squad-examples"}, {"format_version", 1}, {"examples", json::array()}};
  for (const json& e : c["examples"])
    doc["examples"].push_back({{"id", e["id"]}, {"question", "?"}, {"context", e["context"]},
                               {"answers", {{"text", e["answers"]}, {"answer_start", json::array()}}}});
  std::ofstream(squadExamplesPath(path)) << doc.dump();

  auto features = Dataset::open(path);
  ASSERT_TRUE(features) << features.status().toString();
  auto set = SquadEvalSet::load(*features);
  ASSERT_TRUE(set) << set.status().toString();
  EXPECT_EQ(set->numFeatures(), n);
  EXPECT_EQ(set->seqLen(), seq);
  Literal start = Literal::zeros(Type::tensor({n, seq}, ElementType::kF32));
  Literal end = Literal::zeros(Type::tensor({n, seq}, ElementType::kF32));
  std::vector<float> s = floats(c["start_logits"]), e = floats(c["end_logits"]);
  std::copy(s.begin(), s.end(), start.dataAs<float>());
  std::copy(e.begin(), e.end(), end.dataAs<float>());
  SquadPostprocessOptions opts{c["n_best"].get<int64_t>(), c["max_answer_length"].get<int64_t>()};
  auto scores = set->evaluate(start, end, opts);
  ASSERT_TRUE(scores) << scores.status().toString();
  EXPECT_EQ(scores->exactMatch, c["exact_match"].get<double>());
  EXPECT_EQ(scores->f1, c["f1"].get<double>());
  auto preds = set->predictions(start, end, opts);
  ASSERT_TRUE(preds);
  EXPECT_EQ(*preds, c["predictions"].get<std::vector<std::string>>());
  // Logits of the wrong shape, an offset past its context, an examples file of another format.
  EXPECT_FALSE(set->evaluate(start.reshaped({n * seq}), end));
  Literal badOm = om.clone();
  badOm.setInt(9, 100000);  // feature 0, token 4: the end of its first context token
  file.tensors[2].value = badOm;
  const std::string badPath = (fs::path(::testing::TempDir()) / "squad_eval_bad.safetensors").string();
  ASSERT_TRUE(writeSafetensors(badPath, file).isOk());
  auto badFeatures = Dataset::open(badPath);
  ASSERT_TRUE(badFeatures);
  auto badSet = SquadEvalSet::load(*badFeatures, squadExamplesPath(path));
  ASSERT_FALSE(badSet);
  EXPECT_NE(badSet.status().message().find("example 0 token 4"), std::string::npos) << badSet.status().message();
  EXPECT_FALSE(SquadEvalSet::load(*badFeatures));  // no examples file beside it
}

}  // namespace
}  // namespace wf::train
