#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace wf::train {

namespace {

Expected<double> number(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number()) return invalidArgument(where + ": `" + key + "` must be a number");
  return j[key].get<double>();
}

Expected<int64_t> integer(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer())
    return invalidArgument(where + ": `" + key + "` must be an integer");
  return j[key].get<int64_t>();
}

}  // namespace

Expected<LrSchedule> LrSchedule::fromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    return invalidArgument(where + ": the schedule must be an object with a string `kind`");
  LrSchedule s;
  if (!j.contains("base_lrs") || !j["base_lrs"].is_array() || j["base_lrs"].empty())
    return invalidArgument(where + ": `base_lrs` must be a non-empty list of numbers");
  for (const auto& v : j["base_lrs"]) {
    if (!v.is_number()) return invalidArgument(where + ": `base_lrs` must be a non-empty list of numbers");
    s.baseLrs.push_back(v.get<double>());
  }
  std::string kind = j["kind"].get<std::string>();
  if (kind == "constant") {
    s.kind = Kind::kConstant;
  } else if (kind == "step") {
    s.kind = Kind::kStep;
    WF_ASSIGN_OR_RETURN(s.stepSize, integer(j, "step_size", where));
    WF_ASSIGN_OR_RETURN(s.gamma, number(j, "gamma", where));
    if (s.stepSize < 1) return invalidArgument(where + ": `step_size` must be at least 1");
  } else if (kind == "multistep") {
    s.kind = Kind::kMultiStep;
    WF_ASSIGN_OR_RETURN(s.gamma, number(j, "gamma", where));
    if (!j.contains("milestones") || !j["milestones"].is_array())
      return invalidArgument(where + ": `milestones` must be a list of integers");
    for (const auto& v : j["milestones"]) {
      if (!v.is_number_integer()) return invalidArgument(where + ": `milestones` must be a list of integers");
      s.milestones.push_back(v.get<int64_t>());
    }
    // torch's MultiStepLR counts milestones (a Counter); bisect_right needs them sorted
    std::sort(s.milestones.begin(), s.milestones.end());
  } else if (kind == "linear_warmup_decay") {
    s.kind = Kind::kLinearWarmupDecay;
    WF_ASSIGN_OR_RETURN(s.warmupSteps, integer(j, "num_warmup_steps", where));
    WF_ASSIGN_OR_RETURN(s.totalSteps, integer(j, "num_training_steps", where));
    if (s.warmupSteps < 0 || s.totalSteps < 0)
      return invalidArgument(where + ": warmup and training step counts must not be negative");
  } else {
    return invalidArgument(where + ": unknown schedule kind '" + kind +
                           "' (constant, step, multistep, linear_warmup_decay)");
  }
  return s;
}

std::vector<double> LrSchedule::lrAt(int64_t step) const {
  const int64_t k = std::max<int64_t>(step - 1, 0);  // the scheduler's epoch
  double factor = 1.0;
  switch (kind) {
    case Kind::kConstant:
      break;
    case Kind::kStep:
      factor = std::pow(gamma, static_cast<double>(k / stepSize));
      break;
    case Kind::kMultiStep: {
      auto passed = std::upper_bound(milestones.begin(), milestones.end(), k) - milestones.begin();
      factor = std::pow(gamma, static_cast<double>(passed));
      break;
    }
    case Kind::kLinearWarmupDecay:
      // transformers.get_linear_schedule_with_warmup, float for float
      if (k < warmupSteps) {
        factor = static_cast<double>(k) / static_cast<double>(std::max<int64_t>(1, warmupSteps));
      } else {
        factor = std::max(0.0, static_cast<double>(totalSteps - k) /
                                   static_cast<double>(std::max<int64_t>(1, totalSteps - warmupSteps)));
      }
      break;
  }
  std::vector<double> lrs;
  lrs.reserve(baseLrs.size());
  for (double b : baseLrs) lrs.push_back(b * factor);
  return lrs;
}

std::string LrSchedule::kindName() const {
  switch (kind) {
    case Kind::kConstant: return "constant";
    case Kind::kStep: return "step";
    case Kind::kMultiStep: return "multistep";
    case Kind::kLinearWarmupDecay: return "linear_warmup_decay";
  }
  return "?";
}

}  // namespace wf::train
