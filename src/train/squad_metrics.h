// SQuAD v1.1 evaluation in C++, so that the trainer can report EM/F1 while it trains: the
// postprocessing of start/end logits into answer texts (Hugging Face's utils_qa
// postprocess_qa_predictions, v1: n_best 20, max_answer_length 30) and the official v1.1
// metric (exact match and token F1 after normalize_answer). The results equal Python's
// (warpforge.data.squad.postprocess_predictions and squad_v1_metrics) string for string and bit
// for bit; docs/data.md, "SQuAD metrics in C++", says what is matched and how.
//
//   auto features = wf::train::Dataset::open("dev_features.safetensors");    // squad features --eval
//   auto eval = wf::train::SquadEvalSet::load(*features);                     // + its .examples.json
//   auto scores = eval->evaluate(startLogits, endLogits);                     // f32 [N, max_seq]
//   // scores->exactMatch, scores->f1 in percent
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"
#include "train/dataset.h"

namespace wf::train {

// One question of an evaluation set: what postprocessing and the metric need.
struct SquadExample {
  std::string id;
  std::string context;               // UTF-8
  std::vector<std::string> answers;  // the gold answer texts
};

// "<features>.examples.json": the examples file `squad features --eval` writes beside the
// features file.
std::string squadExamplesPath(const std::string& featuresPath);
// Reads an examples file ({"format": "warpforge.squad-examples", "examples": [{"id", "context",
// "answers": {"text": [...]}}, ...]}); errors name the file and the example.
Expected<std::vector<SquadExample>> readSquadExamples(const std::string& path);

struct SquadPostprocessOptions {
  int64_t nBest = 20;            // start and end candidates per feature, and spans kept
  int64_t maxAnswerLength = 30;  // in tokens
};

// The answer text of every example (in example order) from the logits of its features:
//   exampleIndex [N]: the example of each feature (a position in `examples`);
//   offsetMapping [N, seqLen, 2]: each token's character span in the context (code points, as
//     Python counts), -1 for tokens outside the context;
//   startLogits, endLogits [N, seqLen] (f32, row-major).
// Over all features of an example: the n_best highest start and end logits of each feature,
// spans inside the context with end >= start and at most maxAnswerLength tokens, scored by
// start + end logit (a float32 sum); the best-scoring span's text, the first found among equal
// scores; "empty" when there is none (or when the only one is empty). Non-finite logits are an
// error naming the feature.
Expected<std::vector<std::string>> squadPredictions(const std::vector<SquadExample>& examples,
                                                    std::span<const int64_t> exampleIndex,
                                                    std::span<const int64_t> offsetMapping, int64_t seqLen,
                                                    std::span<const float> startLogits,
                                                    std::span<const float> endLogits,
                                                    const SquadPostprocessOptions& options = {});

// The official v1.1 script's normalize_answer on UTF-8 text: Python's str.lower() (full Unicode
// lowercase, U+0130 and the final sigma included), then ASCII punctuation (string.punctuation)
// removed, the words a, an and the removed (re's Unicode \b), whitespace runs (str.isspace())
// collapsed to one space and trimmed. Invalid UTF-8 bytes are read as U+FFFD.
std::string squadNormalizeAnswer(std::string_view text);
bool squadExactMatch(std::string_view prediction, std::string_view truth);
// Token F1 (multiset overlap of the normalised tokens); 0 when nothing overlaps, so also when
// both normalise to nothing.
double squadF1(std::string_view prediction, std::string_view truth);

struct SquadScores {
  double exactMatch = 0;  // percent
  double f1 = 0;          // percent
  int64_t questions = 0;
};

// EM and F1 over every example, each against the best of its gold answers (predictions[i] is
// the answer to examples[i]).
Expected<SquadScores> squadV1Scores(const std::vector<SquadExample>& examples,
                                    const std::vector<std::string>& predictions);

// An evaluation features file with its examples, ready to score logits.
class SquadEvalSet {
 public:
  // `features` holds `example_index` [N] and `offset_mapping` [N, S, 2] (integer tensors);
  // `examplesPath` defaults to squadExamplesPath(features.path()). Checked: every example index
  // inside the examples, every offset inside its context (or -1).
  static Expected<SquadEvalSet> load(const Dataset& features, const std::string& examplesPath = "");

  const std::vector<SquadExample>& examples() const { return examples_; }
  int64_t numFeatures() const { return static_cast<int64_t>(exampleIndex_.size()); }
  int64_t seqLen() const { return seqLen_; }

  // Logits: f32 Literals of shape [numFeatures(), seqLen()], rows in the features file's order.
  Expected<std::vector<std::string>> predictions(const Literal& startLogits, const Literal& endLogits,
                                                 const SquadPostprocessOptions& options = {}) const;
  Expected<SquadScores> evaluate(const Literal& startLogits, const Literal& endLogits,
                                 const SquadPostprocessOptions& options = {}) const;

 private:
  std::string name_;
  std::vector<SquadExample> examples_;
  std::vector<int64_t> exampleIndex_;
  std::vector<int64_t> offsetMapping_;
  int64_t seqLen_ = 0;
};

}  // namespace wf::train
