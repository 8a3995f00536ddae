// Reference outputs computed once per module in a child and kept in the worker process; see
// reference_prime.h. The wire format on the pipe is one status byte ('O' ok, 'E' error) then
// either the output leaves' bytes in depth-first order or the error message; the parent knows
// the leaf shapes from the module's entry result shape.
#include "worker/reference_prime.h"

#include <sys/wait.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cost/calibrate.h"
#include "cost/evaluate.h"
#include "cost/module_hash.h"
#include "cost/reference_cache.h"
#include "runtime/core/executor.h"
#include "runtime/core/value.h"
#include "worker/child_process.h"

namespace hlox::worker {
namespace {

void CollectLeaves(Literal& l, std::vector<Literal*>* out) {
  if (l.shape().IsTuple()) {
    for (Literal& e : l.tuple_elements()) CollectLeaves(e, out);
  } else {
    out->push_back(&l);
  }
}

// Runs in the child: the unoptimized module on the seeded inputs, as EvaluateCandidate does.
std::string ComputeInChild(const Module& module, uint64_t seed, int threads) {
  auto exec = rt::Executor::Create(module, rt::ExecOptions{threads, seed});
  if (!exec.ok()) return absl::StrCat("E", exec.status().message());
  auto value = (*exec)->Run(rt::MakeSeededInputs(module, seed));
  if (!value.ok()) return absl::StrCat("E", value.status().message());
  Literal lit = rt::LiteralFromValue(*value, module.entry()->ResultShape());
  std::vector<Literal*> leaves;
  CollectLeaves(lit, &leaves);
  std::string bytes = "O";
  for (const Literal* leaf : leaves) {
    bytes.append(reinterpret_cast<const char*>(leaf->data()),
                 static_cast<size_t>(leaf->byte_size()));
  }
  return bytes;
}

// The modules (ModuleHash) whose reference run reported an error. Small; cleared when it grows.
std::unordered_set<std::string>& FailedReferences() {
  static auto* s = new std::unordered_set<std::string>();
  return *s;
}

}  // namespace

PrimeOutcome PrimeReference(const EvalRequest& req, int threads, uint32_t timeout_ms,
                            int64_t memory_budget_bytes) {
  PrimeOutcome out;
  if (!req.module || !req.module->entry()) return out;
  (void)CachedPeaks();  // loaded once here instead of in every job's child
  // The worker computed the module's hash once when the text arrived (worker.cc).
  const std::string key = req.module_hash.empty() ? ModuleHash(*req.module) : req.module_hash;
  const uint64_t seed = EvalOptions{}.seed;  // the worker evaluates with the default seed
  if (GlobalReferenceCache().Find(key, seed)) {
    out.result = PrimeResult::kCached;
    return out;
  }
  if (FailedReferences().count(key)) {
    out.result = PrimeResult::kFailed;
    return out;
  }
  Literal expected(req.module->entry()->ResultShape());
  std::vector<Literal*> leaves;
  CollectLeaves(expected, &leaves);
  int64_t total = 0;
  for (const Literal* leaf : leaves) total += leaf->byte_size();
  if (total > kMaxPrimedReferenceBytes) return out;

  const Module& module = *req.module;
  ChildOutput child = RunInChild([&] { return ComputeInChild(module, seed, threads); },
                                 timeout_ms, static_cast<size_t>(total) + (1 << 16),
                                 memory_budget_bytes, threads);
  if (!child.started) return out;  // the job's own fork reports the problem
  if (child.timed_out) {
    out.result = PrimeResult::kTimedOut;
    return out;
  }
  if (child.OutOfMemory()) {  // not a failure of the module: not remembered in FailedReferences
    out.result = PrimeResult::kOutOfMemory;
    return out;
  }
  if (WIFSIGNALED(child.wait_status) && !child.too_big) {
    int sig = WTERMSIG(child.wait_status);
    out.result = PrimeResult::kCrashed;
    out.message = absl::StrCat("evaluation crashed: signal ", sig, " (", strsignal(sig),
                               ") in the reference run");
    return out;
  }
  if (!child.Clean() || child.bytes.empty() || child.bytes[0] != 'O' ||
      child.bytes.size() != static_cast<size_t>(total) + 1) {
    if (FailedReferences().size() > 4096) FailedReferences().clear();
    FailedReferences().insert(key);
    out.result = PrimeResult::kFailed;
    if (!child.bytes.empty() && child.bytes[0] == 'E') out.message = child.bytes.substr(1);
    return out;
  }
  size_t off = 1;
  for (Literal* leaf : leaves) {
    std::memcpy(leaf->data(), child.bytes.data() + off, static_cast<size_t>(leaf->byte_size()));
    off += static_cast<size_t>(leaf->byte_size());
  }
  auto ref = std::make_shared<ReferenceOutputs>();
  ref->result = std::move(expected);
  ref->bytes = total;
  GlobalReferenceCache().Insert(key, seed, std::move(ref));
  out.result = PrimeResult::kComputed;
  return out;
}

}  // namespace hlox::worker
