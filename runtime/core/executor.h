// Executes a verified module on the CPU. An Executor is built once per module (it plans
// buffers by liveness and prepares fused loops) and can run many times.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "runtime/core/executor_donation.h"
#include "runtime/core/kernel.h"
#include "runtime/core/value.h"

namespace hlox::rt {

struct ExecOptions {
  int threads = 1;
  uint64_t seed = 0;  // seeds rng ops and elided constants
  // In-place donation: an elementwise op or fusion may write into a dying operand's buffer
  // (same results bit for bit; lower peak memory, fewer fresh pages). HLOX_NO_DONATE=1 in the
  // environment turns the default off.
  bool donate = DonationDefault();
  // Compiles this executor's fused programs for it alone instead of sharing them with every
  // executor of the same module (runtime/kernels/fusion.cc). Paired measurement sets it: with
  // shared programs all instances of one side share their generated code's placement, an
  // offset per side that no number of instances averages out (cost/paired.h).
  bool private_programs = false;
};

// Time spent in the kernel of one entry-computation instruction (called computations included).
struct InstrTime {
  const Instruction* instr = nullptr;
  double seconds = 0;
};

struct RunStats {
  int64_t peak_bytes = 0;  // peak live buffer bytes during the run
  bool profile = false;    // set by the caller: fill `profile_times`
  std::vector<InstrTime> profile_times;  // entry-computation kernels in execution order
  // Set by the caller: sees every entry-computation value (parameters and constants included)
  // in execution order, right after it is made (used by `hlox run --check-finite`).
  std::function<void(const Instruction&, const Value&)> on_value;
};

class Executor {
 public:
  // Prepares `module` (which must outlive the executor) for execution.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const Module& module, ExecOptions options);
  ~Executor();

  // Runs the entry computation on `args` (one value per entry parameter).
  absl::StatusOr<Value> Run(const std::vector<Value>& args, RunStats* stats = nullptr);
  // Runs any computation of the module (used by kernels for to_apply, while bodies, ...).
  absl::StatusOr<Value> RunComputation(const Computation& comp, const std::vector<const Value*>& args);

  ThreadPool& pool();
  const ExecOptions& options() const;

  // State a kernel keeps per instruction for this executor's lifetime (a compiled fused
  // program and its parsed options): the stored one, or `make()`'s, stored on first use.
  std::shared_ptr<const void> KernelState(const Instruction& instr,
                                          const std::function<std::shared_ptr<const void>()>& make);

 private:
  Executor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Executors Create has made in this process so far (a relaxed atomic count): tests check with
// it that an agent whose verdicts the fleet measures never executes a module itself.
int64_t ExecutorsCreated();

// Seeded inputs for the entry parameters: the same (module, seed) gives the same bits on every
// machine. Floats are uniform in a dtype-suited range, ints small non-negative, pred random.
std::vector<Value> MakeSeededInputs(const Module& module, uint64_t seed);
// Fills an array shape with seeded values (used for inputs and elided constants).
Value MakeSeededValue(const Shape& shape, uint64_t seed);
// The value of a constant instruction: its literal, or (elided) seeded values keyed by the
// run seed and a hash of the instruction's name, so every machine gets the same bits.
Value ConstantValue(const Instruction& constant, uint64_t seed);
// Deterministic 64-bit mixing (splitmix64 finalizer) used for every seed derivation.
uint64_t MixSeed(uint64_t a, uint64_t b);

}  // namespace hlox::rt
