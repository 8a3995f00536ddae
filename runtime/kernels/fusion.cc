// FusionKernel: runs a fusion instruction (kLoop/kInput/kOutput, XLA's or hlox's own) as one
// fused block loop (fused/program.h). Programs are compiled once per fused computation and
// cached under a fingerprint of the computation's content (pointers alone could be reused by a
// later module), guarded by a mutex; an executor with ExecOptions::private_programs compiles
// its own instead. A fusion of a dot and elementwise work on its result runs as an output
// fusion (kernels/output_fusion.h). A fusion whose body neither can handle runs unfused
// through Executor::RunComputation; such fallbacks are counted.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel.h"
#include "runtime/fused/program.h"
#include "runtime/gemm/dot_general.h"
#include "runtime/kernels/output_fusion.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

constexpr size_t kMaxCacheEntries = 4096;

std::atomic<int64_t> g_fused_runs{0}, g_output_runs{0}, g_fallback_runs{0}, g_compiles{0};

struct CacheEntry {
  std::shared_ptr<const FusedProgram> program;  // null: an output fusion or fall back
  std::shared_ptr<const OutputFusion> output;   // null: a fused loop or fall back
  std::string why;
};

struct Cache {
  std::mutex mu;
  std::map<std::pair<const Computation*, uint64_t>, std::shared_ptr<CacheEntry>> entries;
};

Cache& GetCache() {
  static Cache* cache = new Cache();
  return *cache;
}

inline void Mix(uint64_t& h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
}

void MixVec(uint64_t& h, const std::vector<int64_t>& v) {
  Mix(h, v.size());
  for (int64_t x : v) Mix(h, static_cast<uint64_t>(x));
}

// Content fingerprint of a fused computation: everything the compiled program depends on.
uint64_t Fingerprint(const Computation& comp, uint64_t seed) {
  uint64_t h = seed ^ 0x6a09e667f3bcc909ull;
  // Position of each instruction, found by binary search (one allocation per call: this runs
  // on every fusion execution).
  std::vector<std::pair<const Instruction*, int64_t>> order;
  order.reserve(comp.instructions().size());
  for (const auto& i : comp.instructions()) order.emplace_back(i.get(), static_cast<int64_t>(order.size()));
  std::sort(order.begin(), order.end());
  auto pos = [&](const Instruction* p) -> int64_t {
    auto it = std::lower_bound(order.begin(), order.end(), std::make_pair(p, int64_t{-1}));
    return it != order.end() && it->first == p ? it->second : -1;
  };
  Mix(h, pos(comp.root()));
  for (const auto& ip : comp.instructions()) {
    const Instruction& i = *ip;
    const Attributes& a = i.attrs();
    Mix(h, static_cast<uint64_t>(i.opcode()));
    Mix(h, static_cast<uint64_t>(i.shape().element_type()));
    MixVec(h, i.shape().dims());
    if (i.shape().has_layout()) MixVec(h, i.shape().layout()->minor_to_major);
    for (const Instruction* op : i.operands()) Mix(h, pos(op));
    MixVec(h, a.dimensions);
    for (const SliceDim& s : a.slice) { Mix(h, s.start); Mix(h, s.limit); Mix(h, s.stride); }
    for (const PaddingDim& p : a.padding) { Mix(h, p.low); Mix(h, p.high); Mix(h, p.interior); }
    Mix(h, a.iota_dimension);
    Mix(h, a.parameter_number);
    Mix(h, a.comparison ? static_cast<uint64_t>(*a.comparison) + 1 : 0);
    if (!a.comparison_type.empty()) Mix(h, std::hash<std::string>()(a.comparison_type));
    if (i.opcode() == Opcode::kReduce) Mix(h, static_cast<uint64_t>(ClassifyBinary(i.to_apply())));
    if (i.has_literal()) {
      const Literal& l = i.literal();
      if (l.elided()) {
        Mix(h, std::hash<std::string>()(i.name()));
      } else {
        Mix(h, std::hash<std::string_view>()(std::string_view(
                   reinterpret_cast<const char*>(l.data()), static_cast<size_t>(l.byte_size()))));
      }
    }
  }
  return h;
}

std::shared_ptr<CacheEntry> CompileEntry(const Computation& comp, uint64_t seed) {
  auto entry = std::make_shared<CacheEntry>();
  auto prog = FusedProgram::Compile(comp, seed);
  g_compiles.fetch_add(1, std::memory_order_relaxed);
  if (prog.ok()) {
    entry->program = std::shared_ptr<const FusedProgram>(std::move(prog).value());
    return entry;
  }
  entry->why = std::string(prog.status().message());
  auto output = OutputFusion::Compile(comp, seed);
  if (output.ok()) entry->output = std::shared_ptr<const OutputFusion>(std::move(output).value());
  return entry;
}

std::shared_ptr<CacheEntry> Lookup(const Computation& comp, uint64_t seed) {
  Cache& cache = GetCache();
  auto key = std::make_pair(&comp, Fingerprint(comp, seed));
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.entries.find(key);
    if (it != cache.entries.end()) return it->second;
  }
  std::shared_ptr<CacheEntry> entry = CompileEntry(comp, seed);
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.entries.size() >= kMaxCacheEntries) cache.entries.clear();
  cache.entries[key] = entry;
  return entry;
}

// What a fusion instruction needs on every call, prepared on its first.
struct Prepared {
  std::shared_ptr<CacheEntry> entry;
  FusedRunOptions options;
  GemmTuning gemm;  // an output fusion's dot
  ConvTuning conv;  // ... or convolution
};

}  // namespace

FusionKernelStats GetFusionKernelStats() {
  FusionKernelStats s;
  s.fused_runs = g_fused_runs.load();
  s.output_runs = g_output_runs.load();
  s.fallback_runs = g_fallback_runs.load();
  s.compiles = g_compiles.load();
  return s;
}

absl::StatusOr<Value> FusionKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) {
    return KernelError(instr, "fusion needs exactly one called computation");
  }
  const Computation& comp = *instr.called_computations()[0];
  // The program and its options, looked up once per executor and instruction (fingerprinting
  // and parsing the backend config on every call cost ~6% of small modules).
  auto prepare = [&]() -> std::shared_ptr<const void> {
    auto p = std::make_shared<Prepared>();
    const bool own = ctx.executor != nullptr && ctx.executor->options().private_programs;
    p->entry = own ? CompileEntry(comp, ctx.seed) : Lookup(comp, ctx.seed);
    if (instr.attrs().has_backend_config) {
      ParseFusedRunOptions(instr.attrs().backend_config, &p->options);
      p->gemm = ParseGemmTuning(instr.attrs().backend_config);
      p->conv = ParseConvTuning(instr.attrs().backend_config);
    }
    return p;
  };
  auto prepared = std::static_pointer_cast<const Prepared>(
      ctx.executor != nullptr ? ctx.executor->KernelState(instr, prepare) : prepare());
  const CacheEntry& entry = *prepared->entry;
  if (entry.program) {
    g_fused_runs.fetch_add(1, std::memory_order_relaxed);
    return entry.program->Run(operands, ctx.pool, prepared->options);
  }
  if (entry.output) {
    g_output_runs.fetch_add(1, std::memory_order_relaxed);
    auto r = entry.output->Run(operands, ctx.pool, prepared->gemm, prepared->conv);
    if (!r.ok()) return KernelError(instr, std::string(r.status().message()));
    return r;
  }
  if (ctx.executor == nullptr) {
    return KernelError(instr, absl::StrCat("cannot fuse (", entry.why, ") and no executor to fall back on"));
  }
  g_fallback_runs.fetch_add(1, std::memory_order_relaxed);
  return ctx.executor->RunComputation(comp, operands);
}

}  // namespace hlox::rt
