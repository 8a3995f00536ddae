// The executor: per computation a plan (topological order of the instructions the root needs,
// each operand's slot, the slots that die after each step, precomputed constants), then a
// loop that runs each step's kernel and drops values at their last use so buffers return to
// the pool at once, or hands a dying operand's buffer to the step's output in place
// (core/executor_donation.h). The entry computation's peak live bytes are tracked per run.
#include "runtime/core/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/memory_plan.h"
#include "runtime/core/small_float_widen.h"

namespace hlox::rt {
namespace {

struct Step {
  const Instruction* instr = nullptr;
  KernelFn kernel = nullptr;
  std::vector<int> operands;  // slots
  std::vector<int> release;   // slots whose last use is this step
  std::vector<int> donors;    // slots dying here whose buffer the output may take over
  // Set when the instruction computes on f8/f4 values: the kernel runs on f32 copies
  // (core/small_float_widen.h). Decided here, once, so kernels never test for these types.
  std::unique_ptr<WidenedStep> widened;
};

struct CompPlan {
  const Computation* comp = nullptr;
  std::vector<Step> steps;           // slot i is produced by steps[i]
  std::vector<Value> constants;      // per slot, set for constant steps
  std::vector<int> param_slots;      // per parameter number, -1 if unused
  int root_slot = -1;
};

// The most elements one buffer may hold. The parser accepts any declared shape whose byte size
// fits int64 (as XLA does); planning a step is where such a shape would become an allocation.
constexpr int64_t kMaxBufferElements = int64_t{1} << 40;

// Largest element count over the array leaves of `shape` (0 for tokens).
int64_t LargestLeafElements(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.ElementCount() : 0;
  int64_t most = 0;
  for (const Shape& e : shape.tuple_shapes()) most = std::max(most, LargestLeafElements(e));
  return most;
}

// Profile clock: wall time, or with HLOX_PROFILE_CLOCK=thread the calling thread's CPU time
// (steadier on a shared machine; counts only the calling thread, so use it with --threads 1).
double ProfileNow() {
  static const bool thread_clock = [] {
    const char* v = std::getenv("HLOX_PROFILE_CLOCK");
    return v != nullptr && std::string(v) == "thread";
  }();
  if (thread_clock) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct Executor::Impl {
  const Module* module = nullptr;
  ExecOptions options;
  std::unique_ptr<ThreadPool> pool;
  std::unordered_map<const Computation*, std::unique_ptr<CompPlan>> plans;
  std::atomic<uint64_t> rng_state{0};
  std::mutex kernel_state_mu;
  std::unordered_map<const Instruction*, std::shared_ptr<const void>> kernel_state;

  absl::StatusOr<std::unique_ptr<CompPlan>> BuildPlan(const Computation& comp) {
    auto plan = std::make_unique<CompPlan>();
    plan->comp = &comp;
    std::vector<const Instruction*> order = LiveOrder(comp);
    std::unordered_map<const Instruction*, int> slot_of;
    for (size_t i = 0; i < order.size(); ++i) slot_of[order[i]] = static_cast<int>(i);
    plan->steps.resize(order.size());
    plan->constants.resize(order.size());
    plan->param_slots.assign(comp.parameter_count(), -1);
    std::vector<int> last_use(order.size(), -1);
    for (size_t i = 0; i < order.size(); ++i) {
      const Instruction* instr = order[i];
      Step& s = plan->steps[i];
      s.instr = instr;
      s.kernel = KernelFor(instr->opcode());
      if (ComputesByWidening(*instr)) s.widened = std::make_unique<WidenedStep>(*instr);
      if (instr->opcode() != Opcode::kParameter && LargestLeafElements(instr->shape()) > kMaxBufferElements) {
        return absl::ResourceExhaustedError(absl::StrCat("instruction ", instr->name(), " of shape ",
                                                         instr->shape().ToString(false),
                                                         " needs a buffer of more than 2^40 elements; not allocated"));
      }
      for (const Instruction* op : instr->operands()) {
        int slot = slot_of.at(op);
        s.operands.push_back(slot);
        last_use[slot] = static_cast<int>(i);
      }
      if (instr->opcode() == Opcode::kParameter) {
        int64_t pn = instr->parameter_number();
        if (pn < 0 || pn >= comp.parameter_count()) {
          return absl::InvalidArgumentError(absl::StrCat("parameter ", instr->name(), " has bad number ", pn));
        }
        plan->param_slots[pn] = static_cast<int>(i);
      } else if (instr->opcode() == Opcode::kConstant) {
        if (!instr->has_literal()) {
          return absl::InvalidArgumentError(absl::StrCat("constant ", instr->name(), " has no literal"));
        }
        plan->constants[i] = ConstantValue(*instr, options.seed);
      }
    }
    plan->root_slot = order.empty() ? -1 : slot_of.at(comp.root());
    for (size_t i = 0; options.donate && i < order.size(); ++i) {
      Step& s = plan->steps[i];
      if (s.widened != nullptr) continue;  // its kernel writes f32, never a narrow operand's bytes
      const std::vector<int> ok = DonatableOperands(*s.instr, s.kernel);
      for (int k : ok) {
        const int slot = s.operands[k];
        const Opcode producer = plan->steps[slot].instr->opcode();
        if (last_use[slot] != static_cast<int>(i) || slot == plan->root_slot ||
            producer == Opcode::kParameter || producer == Opcode::kConstant) {
          continue;
        }
        // The same value passed again at a position that reads it differently (fusion(x, x)
        // with x transposed inside) keeps its buffer.
        bool every_use_ok = true;
        for (size_t j = 0; j < s.operands.size(); ++j) {
          if (s.operands[j] == slot && std::find(ok.begin(), ok.end(), static_cast<int>(j)) == ok.end()) {
            every_use_ok = false;
          }
        }
        if (every_use_ok) s.donors.push_back(slot);
      }
    }
    for (size_t slot = 0; slot < order.size(); ++slot) {
      if (static_cast<int>(slot) == plan->root_slot) continue;
      // Values nobody reads die right after they are made.
      int at = last_use[slot] >= 0 ? last_use[slot] : static_cast<int>(slot);
      plan->steps[at].release.push_back(static_cast<int>(slot));
    }
    return plan;
  }

  absl::StatusOr<Value> Execute(Executor* self, const CompPlan& plan,
                                const std::vector<const Value*>& args, RunStats* stats) {
    const Computation& comp = *plan.comp;
    if (static_cast<int64_t>(args.size()) != comp.parameter_count()) {
      return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " takes ",
                                                     comp.parameter_count(), " arguments, got ",
                                                     args.size()));
    }
    if (plan.root_slot < 0) return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " has no root"));
    if (stats) stats->profile_times.clear();
    KernelContext ctx;
    ctx.pool = pool.get();
    ctx.seed = options.seed;
    uint64_t local_state = rng_state.load();
    ctx.rng_state = &local_state;
    ctx.executor = self;
    // A kernel running a nested computation must not hand its own offer to a nested kernel.
    OfferDonation(nullptr);
    std::vector<Value> slots(plan.steps.size());
    std::vector<const Value*> operands;
    // Live-byte accounting (entry only): count each distinct allocation once (views share
    // their base's bytes).
    std::unordered_map<const uint8_t*, int> refs;
    int64_t live = 0, peak = 0;
    auto track = [&](const Value& v, int delta) {
      std::vector<BufferPtr> leaves;
      v.Flatten(&leaves);
      for (const BufferPtr& b : leaves) {
        int& r = refs[b->data()];
        if (r == 0 && delta > 0) live += b->byte_size();
        r += delta;
        if (r == 0 && delta < 0) {
          live -= b->byte_size();
          refs.erase(b->data());
        }
      }
      peak = std::max(peak, live);
    };
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step& s = plan.steps[i];
      Opcode op = s.instr->opcode();
      if (op == Opcode::kParameter) {
        slots[i] = *args[s.instr->parameter_number()];
      } else if (op == Opcode::kConstant) {
        slots[i] = plan.constants[i];
      } else {
        operands.clear();
        for (int o : s.operands) operands.push_back(&slots[o]);
        const bool timed = stats != nullptr && stats->profile;
        const double t0 = timed ? ProfileNow() : 0.0;
        // Offer the first dying operand buffer that nothing else holds (a view, a tuple
        // element still held, a value shared with a caller's argument all fail this).
        for (int d : s.donors) {
          const BufferPtr& b = slots[d].array;
          if (!slots[d].is_tuple && b != nullptr && b.use_count() == 1 && b->Donatable()) {
            OfferDonation(b.get());
            break;
          }
        }
        absl::StatusOr<Value> r = s.widened != nullptr ? s.widened->Run(s.kernel, operands, ctx)
                                                       : s.kernel(*s.instr, operands, ctx);
        OfferDonation(nullptr);
        if (timed) {
          stats->profile_times.push_back({s.instr, ProfileNow() - t0});
        }
        if (!r.ok()) {
          return absl::Status(r.status().code(),
                              absl::StrCat(r.status().message(), " [in ", comp.name(), "/",
                                           s.instr->name(), "]"));
        }
        slots[i] = *std::move(r);
      }
      if (stats) track(slots[i], +1);
      if (stats && stats->on_value) stats->on_value(*s.instr, slots[i]);
      for (int dead : s.release) {
        if (stats) track(slots[dead], -1);
        slots[dead] = Value();
      }
    }
    if (comp.IsEntry()) rng_state.store(local_state);
    if (stats) stats->peak_bytes = peak;
    return std::move(slots[plan.root_slot]);
  }
};

namespace {
std::atomic<int64_t> executors_created{0};
}  // namespace

int64_t ExecutorsCreated() { return executors_created.load(std::memory_order_relaxed); }

Executor::Executor() : impl_(std::make_unique<Impl>()) {}
Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const Module& module, ExecOptions options) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  executors_created.fetch_add(1, std::memory_order_relaxed);
  std::unique_ptr<Executor> ex(new Executor());
  Impl& im = *ex->impl_;
  im.module = &module;
  im.options = options;
  im.options.threads = std::max(1, options.threads);
  im.pool = std::make_unique<ThreadPool>(im.options.threads);
  im.rng_state = MixSeed(options.seed, 0x7a6e);
  for (const auto& comp : module.computations()) {
    auto plan = im.BuildPlan(*comp);
    if (!plan.ok()) return plan.status();
    im.plans[comp.get()] = *std::move(plan);
  }
  return ex;
}

absl::StatusOr<Value> Executor::Run(const std::vector<Value>& args, RunStats* stats) {
  const Computation* entry = impl_->module->entry();
  std::vector<const Value*> ptrs;
  for (const Value& v : args) ptrs.push_back(&v);
  for (size_t i = 0; i < args.size() && i < static_cast<size_t>(entry->parameter_count()); ++i) {
    const Shape& want = entry->parameter(static_cast<int64_t>(i))->shape();
    if (want.IsArray() && (!args[i].is_array() || !args[i].array->shape().Compatible(want))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " does not match parameter shape ", want.ToString(false),
          args[i].is_array() ? absl::StrCat(" (got ", args[i].array->shape().ToString(false), ")") : ""));
    }
  }
  return impl_->Execute(this, *impl_->plans.at(entry), ptrs, stats);
}

absl::StatusOr<Value> Executor::RunComputation(const Computation& comp,
                                               const std::vector<const Value*>& args) {
  auto it = impl_->plans.find(&comp);
  if (it == impl_->plans.end()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " is not in the module"));
  }
  return impl_->Execute(this, *it->second, args, nullptr);
}

ThreadPool& Executor::pool() { return *impl_->pool; }
const ExecOptions& Executor::options() const { return impl_->options; }

std::shared_ptr<const void> Executor::KernelState(const Instruction& instr,
                                                  const std::function<std::shared_ptr<const void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(impl_->kernel_state_mu);
    auto it = impl_->kernel_state.find(&instr);
    if (it != impl_->kernel_state.end()) return it->second;
  }
  std::shared_ptr<const void> state = make();  // outside the lock: may compile
  std::lock_guard<std::mutex> lock(impl_->kernel_state_mu);
  return impl_->kernel_state.emplace(&instr, std::move(state)).first->second;
}

}  // namespace hlox::rt
