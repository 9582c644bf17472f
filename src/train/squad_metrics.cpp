#include "train/squad_metrics.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

namespace wf::train {

namespace {

struct CodeRange {
  char32_t first, last;
};
struct LowerRun {
  char32_t first;
  uint32_t count, stride;
  int32_t delta;
};

#include "train/squad_unicode_tables.inc"

constexpr char32_t kReplacement = 0xFFFD;

template <size_t N>
bool inRanges(const CodeRange (&ranges)[N], char32_t c) {
  auto it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                             [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != std::begin(ranges) && c <= std::prev(it)->last;
}

bool isWord(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return inRanges(kWordRanges, c);
}
bool isSpace(char32_t c) { return inRanges(kSpaceRanges, c); }
bool isCased(char32_t c) { return inRanges(kCasedRanges, c); }
bool isCaseIgnorable(char32_t c) { return inRanges(kIgnorableRanges, c); }

// str.lower()'s one-to-one mappings, expanded and sorted once.
const std::vector<std::pair<char32_t, char32_t>>& lowerTable() {
  static const std::vector<std::pair<char32_t, char32_t>> table = [] {
    std::vector<std::pair<char32_t, char32_t>> t;
    for (const LowerRun& r : kLowerRuns)
      for (uint32_t k = 0; k < r.count; ++k) {
        char32_t c = r.first + k * r.stride;
        t.emplace_back(c, static_cast<char32_t>(static_cast<int64_t>(c) + r.delta));
      }
    std::sort(t.begin(), t.end());
    return t;
  }();
  return table;
}

char32_t lowerOne(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  const auto& t = lowerTable();
  auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(c, char32_t{0}));
  return (it != t.end() && it->first == c) ? it->second : c;
}

// UTF-8 to code points; an invalid byte reads as U+FFFD. `starts` (optional) gets the byte
// position of every code point and, last, the string's size.
std::u32string decodeUtf8(std::string_view s, std::vector<size_t>* starts = nullptr) {
  std::u32string out;
  out.reserve(s.size());
  if (starts) starts->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0, n = s.size();
  while (i < n) {
    if (starts) starts->push_back(i);
    unsigned char b = p[i];
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    int len = (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    char32_t c = len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + static_cast<size_t>(len) <= n;
    for (int k = 1; ok && k < len; ++k) {
      unsigned char cb = p[i + static_cast<size_t>(k)];
      ok = (cb & 0xC0) == 0x80;
      c = (c << 6) | (cb & 0x3F);
    }
    // overlong forms, surrogates and values past U+10FFFF are not UTF-8
    if (ok) ok = !(len == 2 && c < 0x80) && !(len == 3 && c < 0x800) && !(len == 4 && c < 0x10000) &&
                 !(c >= 0xD800 && c <= 0xDFFF) && c <= 0x10FFFF;
    if (!ok) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    out.push_back(c);
    i += static_cast<size_t>(len);
  }
  if (starts) starts->push_back(n);
  return out;
}

void appendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Python's str.lower(), CPython's rules: one-to-one mappings, U+0130 -> "i\u0307", and U+03A3 ->
// final sigma U+03C2 when preceded by a cased letter and not followed by one (case-ignorable
// code points skipped both ways), else U+03C3.
std::u32string pyLower(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c == 0x130) {
      out.push_back(U'i');
      out.push_back(0x307);
    } else if (c == 0x3A3) {
      size_t j = i;
      while (j > 0 && isCaseIgnorable(s[j - 1])) --j;
      bool final = j > 0 && isCased(s[j - 1]);
      if (final) {
        size_t k = i + 1;
        while (k < s.size() && isCaseIgnorable(s[k])) ++k;
        final = k == s.size() || !isCased(s[k]);
      }
      out.push_back(final ? 0x3C2 : 0x3C3);
    } else {
      out.push_back(lowerOne(c));
    }
  }
  return out;
}

bool isAsciiPunctuation(char32_t c) {
  // string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

// re.sub(r"\b(a|an|the)\b", " ", text) with Unicode word characters.
std::u32string removeArticles(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  const size_t n = s.size();
  auto wordAt = [&](size_t i) { return i < n && isWord(s[i]); };
  size_t i = 0;
  while (i < n) {
    if (!(i > 0 && isWord(s[i - 1]))) {
      size_t len = 0;
      // alternatives in the regex's order: a, an, the (each needs a boundary after it)
      if (s[i] == U'a' && !wordAt(i + 1)) len = 1;
      else if (s[i] == U'a' && i + 1 < n && s[i + 1] == U'n' && !wordAt(i + 2)) len = 2;
      else if (s[i] == U't' && i + 2 < n && s[i + 1] == U'h' && s[i + 2] == U'e' && !wordAt(i + 3)) len = 3;
      if (len) {
        out.push_back(U' ');
        i += len;
        continue;
      }
    }
    out.push_back(s[i]);
    ++i;
  }
  return out;
}

std::vector<std::string> normalizedTokens(std::string_view text) {
  std::string norm = squadNormalizeAnswer(text);
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < norm.size()) {
    size_t j = norm.find(' ', i);
    if (j == std::string::npos) j = norm.size();
    if (j > i) tokens.emplace_back(norm.substr(i, j - i));
    i = j + 1;
  }
  return tokens;
}

// Byte position of every code point of a UTF-8 string, and its end: size = code points + 1.
std::vector<size_t> codePointStarts(std::string_view s) {
  std::vector<size_t> starts;
  decodeUtf8(s, &starts);
  return starts;
}

// Python's text[begin:end] on code points.
std::string pySlice(std::string_view text, const std::vector<size_t>& starts, int64_t begin, int64_t end) {
  const int64_t n = static_cast<int64_t>(starts.size()) - 1;
  auto clamp = [n](int64_t v) { return v < 0 ? std::max<int64_t>(0, n + v) : std::min(v, n); };
  begin = clamp(begin);
  end = clamp(end);
  if (end <= begin) return "";
  const size_t b = starts[static_cast<size_t>(begin)], e = starts[static_cast<size_t>(end)];
  return std::string(text.substr(b, e - b));
}

// The n highest entries of `row` (ties: the higher index first, as a stable ascending argsort
// read backwards).
std::vector<int64_t> topIndices(std::span<const float> row, int64_t n) {
  std::vector<int64_t> idx(row.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  const auto k = static_cast<ptrdiff_t>(std::min<int64_t>(n, static_cast<int64_t>(idx.size())));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    float x = row[static_cast<size_t>(a)], y = row[static_cast<size_t>(b)];
    return x > y || (x == y && a > b);
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

}  // namespace

std::string squadNormalizeAnswer(std::string_view text) {
  std::u32string s = pyLower(decodeUtf8(text));
  std::u32string noPunct;
  noPunct.reserve(s.size());
  for (char32_t c : s)
    if (!isAsciiPunctuation(c)) noPunct.push_back(c);
  std::u32string words = removeArticles(noPunct);
  std::string out;
  out.reserve(words.size());
  bool inWord = false;
  for (char32_t c : words) {
    if (isSpace(c)) {
      inWord = false;
      continue;
    }
    if (!inWord && !out.empty()) out += ' ';
    inWord = true;
    appendUtf8(out, c);
  }
  return out;
}

bool squadExactMatch(std::string_view prediction, std::string_view truth) {
  return squadNormalizeAnswer(prediction) == squadNormalizeAnswer(truth);
}

double squadF1(std::string_view prediction, std::string_view truth) {
  std::vector<std::string> pred = normalizedTokens(prediction), gold = normalizedTokens(truth);
  std::map<std::string, int64_t> counts;
  for (const std::string& t : gold) ++counts[t];
  int64_t same = 0;
  for (const std::string& t : pred) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  if (same == 0) return 0;
  const double precision = 1.0 * static_cast<double>(same) / static_cast<double>(pred.size());
  const double recall = 1.0 * static_cast<double>(same) / static_cast<double>(gold.size());
  return (2 * precision * recall) / (precision + recall);
}

Expected<SquadScores> squadV1Scores(const std::vector<SquadExample>& examples,
                                    const std::vector<std::string>& predictions) {
  if (predictions.size() != examples.size())
    return invalidArgument("SQuAD metric: " + std::to_string(predictions.size()) + " predictions for " +
                           std::to_string(examples.size()) + " questions");
  SquadScores s;
  int64_t exact = 0;
  double f1 = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const SquadExample& ex = examples[i];
    if (ex.answers.empty()) return invalidArgument("SQuAD metric: question '" + ex.id + "' has no gold answer");
    bool em = false;
    double best = 0;
    for (size_t k = 0; k < ex.answers.size(); ++k) {
      em = em || squadExactMatch(predictions[i], ex.answers[k]);
      double v = squadF1(predictions[i], ex.answers[k]);
      best = k == 0 ? v : std::max(best, v);
    }
    exact += em ? 1 : 0;
    f1 += best;
  }
  s.questions = static_cast<int64_t>(examples.size());
  if (s.questions > 0) {
    s.exactMatch = 100.0 * static_cast<double>(exact) / static_cast<double>(s.questions);
    s.f1 = 100.0 * f1 / static_cast<double>(s.questions);
  }
  return s;
}

Expected<std::vector<std::string>> squadPredictions(const std::vector<SquadExample>& examples,
                                                    std::span<const int64_t> exampleIndex,
                                                    std::span<const int64_t> offsetMapping, int64_t seqLen,
                                                    std::span<const float> startLogits,
                                                    std::span<const float> endLogits,
                                                    const SquadPostprocessOptions& options) {
  const size_t n = exampleIndex.size();
  const size_t s = static_cast<size_t>(std::max<int64_t>(seqLen, 0));
  if (seqLen <= 0 || offsetMapping.size() != n * s * 2 || startLogits.size() != n * s || endLogits.size() != n * s)
    return invalidArgument("SQuAD postprocessing: " + std::to_string(n) + " features of " + std::to_string(seqLen) +
                           " tokens need offsets of " + std::to_string(n * s * 2) + " values and logits of " +
                           std::to_string(n * s) + "; got " + std::to_string(offsetMapping.size()) + ", " +
                           std::to_string(startLogits.size()) + " and " + std::to_string(endLogits.size()));
  if (options.nBest < 1 || options.maxAnswerLength < 1)
    return invalidArgument("SQuAD postprocessing: n_best and max_answer_length must be at least 1");
  std::vector<std::vector<size_t>> featuresOf(examples.size());
  for (size_t f = 0; f < n; ++f) {
    const int64_t e = exampleIndex[f];
    if (e < 0 || e >= static_cast<int64_t>(examples.size()))
      return outOfRange("SQuAD postprocessing: feature " + std::to_string(f) + " belongs to example " +
                        std::to_string(e) + ", outside the " + std::to_string(examples.size()) + " examples");
    for (size_t t = 0; t < s; ++t) {
      const float a = startLogits[f * s + t], b = endLogits[f * s + t];
      if (!std::isfinite(a) || !std::isfinite(b))
        return invalidArgument("SQuAD postprocessing: feature " + std::to_string(f) + " has a non-finite " +
                               (std::isfinite(a) ? "end" : "start") + " logit at token " + std::to_string(t));
    }
    featuresOf[static_cast<size_t>(e)].push_back(f);
  }

  std::vector<std::string> out;
  out.reserve(examples.size());
  for (size_t e = 0; e < examples.size(); ++e) {
    const std::string& context = examples[e].context;
    int64_t count = 0;
    float bestScore = 0;
    int64_t bestBegin = 0, bestEnd = 0;
    for (size_t f : featuresOf[e]) {
      std::span<const float> sl = startLogits.subspan(f * s, s), el = endLogits.subspan(f * s, s);
      const int64_t* off = offsetMapping.data() + f * s * 2;
      std::vector<int64_t> starts = topIndices(sl, options.nBest), ends = topIndices(el, options.nBest);
      for (int64_t a : starts)
        for (int64_t b : ends) {
          if (off[a * 2] < 0 || off[b * 2] < 0) continue;  // outside the context
          if (b < a || b - a + 1 > options.maxAnswerLength) continue;
          const float score = sl[static_cast<size_t>(a)] + el[static_cast<size_t>(b)];
          if (count == 0 || score > bestScore) {
            bestScore = score;
            bestBegin = off[a * 2];
            bestEnd = off[b * 2 + 1];
          }
          ++count;
        }
    }
    if (count == 0) {
      out.emplace_back("empty");
      continue;
    }
    std::string text = pySlice(context, codePointStarts(context), bestBegin, bestEnd);
    out.push_back(count == 1 && text.empty() ? std::string("empty") : std::move(text));
  }
  return out;
}

std::string squadExamplesPath(const std::string& featuresPath) { return featuresPath + ".examples.json"; }

Expected<std::vector<SquadExample>> readSquadExamples(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound(path + ": cannot open the examples file");
  std::stringstream buf;
  buf << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(buf.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return invalidArgument(path + ": not valid JSON");
  if (!doc.is_object() || doc.value("format", std::string()) != "warpforge.squad-examples" ||
      !doc.contains("examples") || !doc["examples"].is_array())
    return invalidArgument(path + ": not a warpforge.squad-examples file (written by `python -m warpforge.data.squad "
                                  "features --eval`)");
  std::vector<SquadExample> out;
  out.reserve(doc["examples"].size());
  for (size_t i = 0; i < doc["examples"].size(); ++i) {
    const nlohmann::json& e = doc["examples"][i];
    const std::string where = path + ": examples[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("id") || !e["id"].is_string() || !e.contains("context") ||
        !e["context"].is_string())
      return invalidArgument(where + ": needs a string id and context");
    SquadExample ex{e["id"].get<std::string>(), e["context"].get<std::string>(), {}};
    const nlohmann::json* texts = nullptr;
    if (e.contains("answers") && e["answers"].is_object() && e["answers"].contains("text"))
      texts = &e["answers"]["text"];
    if (!texts || !texts->is_array() || texts->empty())
      return invalidArgument(where + " (id '" + ex.id + "'): needs answers.text, a non-empty list of strings");
    for (const nlohmann::json& t : *texts) {
      if (!t.is_string()) return invalidArgument(where + " (id '" + ex.id + "'): an answer text is not a string");
      ex.answers.push_back(t.get<std::string>());
    }
    out.push_back(std::move(ex));
  }
  return out;
}

Expected<SquadEvalSet> SquadEvalSet::load(const Dataset& features, const std::string& examplesPathIn) {
  const std::string examplesPath = examplesPathIn.empty() ? squadExamplesPath(features.path()) : examplesPathIn;
  SquadEvalSet set;
  set.name_ = features.path();
  WF_ASSIGN_OR_RETURN(set.examples_, readSquadExamples(examplesPath));
  WF_ASSIGN_OR_RETURN(Literal index, features.tensor("example_index"));
  WF_ASSIGN_OR_RETURN(Literal offsets, features.tensor("offset_mapping"));
  const std::string file = features.path();
  if (!isInteger(index.elementType()) || index.shape().size() != 1)
    return invalidArgument(file + ": tensor 'example_index' must be an integer tensor [N]");
  if (!isInteger(offsets.elementType()) || offsets.shape().size() != 3 || offsets.shape()[2] != 2)
    return invalidArgument(file + ": tensor 'offset_mapping' must be an integer tensor [N, max_seq, 2]");
  const int64_t n = index.shape()[0];
  set.seqLen_ = offsets.shape()[1];
  const int64_t numExamples = static_cast<int64_t>(set.examples_.size());
  set.exampleIndex_.resize(static_cast<size_t>(n));
  set.offsetMapping_.resize(static_cast<size_t>(offsets.numElements()));
  std::vector<int64_t> contextLength(set.examples_.size(), -1);
  for (int64_t f = 0; f < n; ++f) {
    const int64_t e = index.getInt(f);
    if (e < 0 || e >= numExamples)
      return outOfRange(file + ": tensor 'example_index': example " + std::to_string(f) + " holds " + std::to_string(e) +
                        ", outside the " + std::to_string(numExamples) + " examples of " + examplesPath);
    set.exampleIndex_[static_cast<size_t>(f)] = e;
    int64_t& len = contextLength[static_cast<size_t>(e)];
    if (len < 0) len = static_cast<int64_t>(codePointStarts(set.examples_[static_cast<size_t>(e)].context).size()) - 1;
    for (int64_t t = 0; t < set.seqLen_; ++t) {
      const int64_t k = (f * set.seqLen_ + t) * 2;
      const int64_t a = offsets.getInt(k), b = offsets.getInt(k + 1);
      set.offsetMapping_[static_cast<size_t>(k)] = a;
      set.offsetMapping_[static_cast<size_t>(k) + 1] = b;
      if (a >= 0 && (b < a || b > len))
        return outOfRange(file + ": tensor 'offset_mapping': example " + std::to_string(f) + " token " +
                          std::to_string(t) + " spans characters [" + std::to_string(a) + ", " + std::to_string(b) +
                          "), outside the " + std::to_string(len) + " characters of the context of '" +
                          set.examples_[static_cast<size_t>(e)].id + "'");
    }
  }
  return set;
}

Expected<std::vector<std::string>> SquadEvalSet::predictions(const Literal& startLogits, const Literal& endLogits,
                                                             const SquadPostprocessOptions& options) const {
  const std::vector<int64_t> want = {numFeatures(), seqLen_};
  for (const Literal* l : {&startLogits, &endLogits})
    if (l->elementType() != ElementType::kF32 || l->shape() != want)
      return invalidArgument(name_ + ": logits must be f32 [" + std::to_string(want[0]) + ", " + std::to_string(want[1]) +
                             "] (one row per feature), got " + l->type().toString());
  const auto count = static_cast<size_t>(startLogits.numElements());
  return squadPredictions(examples_, exampleIndex_, offsetMapping_, seqLen_,
                          std::span<const float>(startLogits.dataAs<float>(), count),
                          std::span<const float>(endLogits.dataAs<float>(), count), options);
}

Expected<SquadScores> SquadEvalSet::evaluate(const Literal& startLogits, const Literal& endLogits,
                                             const SquadPostprocessOptions& options) const {
  WF_ASSIGN_OR_RETURN(std::vector<std::string> preds, predictions(startLogits, endLogits, options));
  return squadV1Scores(examples_, preds);
}

}  // namespace wf::train
