// Paired measurement of two modules through the runtime, for searches' final verdicts.
#include "absl/strings/str_cat.h"
#include "cost/evaluate.h"
#include "cost/paired.h"
#include "runtime/executor.h"

namespace hlox {

absl::StatusOr<PairedResult> MeasurePairedModules(const Module& baseline, const Module& candidate,
                                                  const EvalOptions& options) {
  rt::ExecOptions eo{options.threads, options.seed};
  auto base = rt::Executor::Create(baseline, eo);
  if (!base.ok()) return base.status();
  auto cand = rt::Executor::Create(candidate, eo);
  if (!cand.ok()) return cand.status();
  const std::vector<rt::Value> inputs = rt::MakeSeededInputs(baseline, options.seed);
  if (candidate.entry() == nullptr ||
      candidate.entry()->parameter_count() != static_cast<int64_t>(inputs.size())) {
    return absl::InvalidArgumentError("paired measurement: entry signatures differ");
  }
  rt::Executor& b = **base;
  rt::Executor& c = **cand;
  return MeasurePairedOrError([&]() { return b.Run(inputs).status(); },
                              [&]() { return c.Run(inputs).status(); }, options.protocol,
                              options.seed);
}

}  // namespace hlox
