// Objectives and the cost a search reads from a record.
#include "agent/evaluator.h"

#include "absl/strings/str_cat.h"

namespace hlox {

absl::StatusOr<Objective> ParseObjective(const std::string& name) {
  if (name == "measured") return Objective::kMeasured;
  if (name == "roofline") return Objective::kRoofline;
  if (name == "ops") return Objective::kOpCount;
  if (name == "scratchpad") return Objective::kScratchpad;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown objective '", name, "' (measured, roofline, ops, scratchpad)"));
}

const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kMeasured: return "measured";
    case Objective::kRoofline: return "roofline";
    case Objective::kOpCount: return "ops";
    case Objective::kScratchpad: return "scratchpad";
  }
  return "?";
}

double RecordCost(const ResultRecord& record, Objective objective) {
  if (record.status != JobStatus::kOk) return std::numeric_limits<double>::infinity();
  switch (objective) {
    case Objective::kMeasured:
      return record.cost.samples.empty() ? std::numeric_limits<double>::infinity() : record.cost.median;
    case Objective::kRoofline: return record.analytical.roofline_seconds;
    case Objective::kOpCount: return static_cast<double>(record.analytical.op_count);
    case Objective::kScratchpad: return record.analytical.scratchpad_traffic_bytes;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace hlox
