// Learning-rate schedules of a training package (docs/training.md, "Learning-rate schedules"):
// the manifest's `lr_schedule` object, evaluated per update exactly as PyTorch's schedulers (and
// warpforge.lr_at in Python) do, in float64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/status.h"

namespace wf::train {

struct LrSchedule {
  enum class Kind { kConstant, kStep, kMultiStep, kLinearWarmupDecay };
  Kind kind = Kind::kConstant;
  std::vector<double> baseLrs;  // one per param group
  int64_t stepSize = 1;         // kStep
  double gamma = 1.0;           // kStep, kMultiStep
  std::vector<int64_t> milestones;  // kMultiStep, ascending
  int64_t warmupSteps = 0;      // kLinearWarmupDecay
  int64_t totalSteps = 0;       // kLinearWarmupDecay

  // Reads the manifest object ({"kind": ..., "base_lrs": [...], ...}); `where` names it in errors.
  static Expected<LrSchedule> fromJson(const nlohmann::json& j, const std::string& where);
  // The lr of every param group for update number `step` (1 for the first): what the optimizer
  // holds after step - 1 calls of scheduler.step().
  std::vector<double> lrAt(int64_t step) const;
  std::string kindName() const;
};

}  // namespace wf::train
