// CodegenTuning: code-generation parameters of each fused loop and each heavy dot as decisions
// (Xtat-style joint tuning with fusion). Choice 0 "keep" leaves the runtime's own choice; the
// others write JSON keys into the instruction's backend_config, where the runtime reads them.
// - "tune:<fusion>": the fused loop's block size (elements per block) and thread count (1, or
//   0 = every pool thread): hlox_block / hlox_threads, read by FusionKernel; for a fusion with a
//   transpose, also how a transposing output is walked: row by row, or in tiles of 16 or 32
//   (the runtime's default: 64; fused/tile.cc): hlox_tile.
// - "gemm:<dot>" (dots of at least kMinDotMnk multiply-adds with a float result): one knob of
//   the packed GEMM per choice (runtime/gemm/dot_general.h GemmTuning, read by the dot kernel): a single
//   thread, the row or column schedule, fewer or more A panels per unit (mc), fewer or more B
//   panels per A panel (nc), the tile order (b_in_l1: each B panel meets a block of A panels,
//   BLIS's order), and for batched dots whether threads split the batches or each GEMM. Only knobs that can change this dot's run are offered (e.g. no thread choices for a
//   dot too small to split). None changes a bit of the result. An output fusion (a dot or
//   convolution with its epilogue, passes/fusion/output_fusion.cc) gets its dot's "gemm:" or its
//   convolution's "conv:" site, not a "tune:" one.
// - "conv:<convolution>" (convolutions of at least kMinDotMnk multiply-adds): the algorithm
//   (runtime/conv/tuning.h: tiles, wide_k, planes, plane_filter, where the convolution has that form)
//   and a single thread: hlox_conv_algo / hlox_threads, read by the convolution kernel.
//   Algorithms change results by rounding only (each sums the same products in its own order).
// Sites never overlap; fused loops, dots and convolutions are listed in post order.
#include <optional>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"
#include "runtime/conv/tuning.h"

namespace hlox {
namespace {

constexpr int64_t kBlocks[] = {1024, 4096, 16384};
constexpr int kThreads[] = {1, 0};

// Dots below this many multiply-adds run in microseconds whatever the blocking: no site.
constexpr int64_t kMinDotMnk = int64_t{1} << 16;
// Below this the runtime never splits a dot over threads (runtime/gemm/gemm.h).
constexpr int64_t kParallelMnk = int64_t{1} << 20;

// One choice of a dot or convolution: its name and the backend_config keys it sets.
struct Knob {
  std::string name;
  std::string keys;
};
// The GEMM knobs by the condition that offers them (GemmChoicesFor).
const Knob kThreadChoices[] = {{"t1", "\"hlox_threads\":1"}};
const Knob kPackedChoices[] = {
    {"rows", "\"hlox_gemm_schedule\":1"}, {"columns", "\"hlox_gemm_schedule\":2"},
    {"mc8", "\"hlox_gemm_mc\":8"},        {"mc64", "\"hlox_gemm_mc\":64"},
    {"nc4", "\"hlox_gemm_nc\":4"},        {"nc16", "\"hlox_gemm_nc\":16"},
    {"b_in_l1", "\"hlox_gemm_order\":1"}};
const Knob kBatchChoices[] = {{"split_batches", "\"hlox_gemm_batches\":1"},
                              {"split_each", "\"hlox_gemm_batches\":2"}};
const std::vector<std::string> kHloxKeys = {"\"hlox_block\":", "\"hlox_threads\":", "\"hlox_tile\":", "\"hlox_conv_algo\":",
                                     "\"hlox_gemm_mc\":", "\"hlox_gemm_nc\":", "\"hlox_gemm_schedule\":",
                                     "\"hlox_gemm_batches\":", "\"hlox_gemm_order\":"};

// GEMM geometry of a dot: batch, m, n, k (products of the batch, free and contracting dims).
struct DotGeometry {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t mnk() const { return batch * m * n * k; }
};

std::optional<DotGeometry> GeometryOf(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray()) return std::nullopt;
  const Shape& l = dot.operand(0)->shape();
  const Shape& r = dot.operand(1)->shape();
  if (!l.IsArray() || !r.IsArray()) return std::nullopt;
  const DotDimensionNumbers dn = dot.attrs().dot.value_or(DotDimensionNumbers{});
  DotGeometry g;
  for (int64_t d : dn.lhs_batch) {
    if (d < 0 || d >= l.rank()) return std::nullopt;
    g.batch *= l.dim(d);
  }
  for (int64_t d : dn.lhs_contracting) {
    if (d < 0 || d >= l.rank()) return std::nullopt;
    g.k *= l.dim(d);
  }
  if (g.batch * g.k == 0) return std::nullopt;
  g.m = l.ElementCount() / (g.batch * g.k);
  g.n = r.ElementCount() / (g.batch * g.k);
  return g;
}

bool FloatResult(const Instruction& dot) {
  PrimitiveType t = dot.shape().element_type();
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF16 || t == PrimitiveType::kBF16;
}

// The GEMM knobs that can change this dot's run.
std::vector<Knob> GemmChoicesFor(const Instruction& dot, const DotGeometry& g) {
  std::vector<Knob> out;
  if (g.mnk() >= kParallelMnk) {
    for (const Knob& c : kThreadChoices) out.push_back(c);
  }
  // The packed f32 GEMM runs a dot with more than 4 rows of C (fewer stream like a GEMV).
  if (FloatResult(dot) && g.m > 4) {
    for (const Knob& c : kPackedChoices) out.push_back(c);
  }
  if (g.batch > 1 && g.mnk() >= kParallelMnk) {
    for (const Knob& c : kBatchChoices) out.push_back(c);
  }
  return out;
}

// Multiply-adds of a convolution: output elements times taps x input features per group.
int64_t ConvMacs(const Instruction& conv) {
  if (!conv.attrs().conv.has_value() || conv.operand_count() != 2) return 0;
  const Shape& ks = conv.operand(1)->shape();
  const int64_t o_dim = conv.attrs().conv->kernel_output_feature;
  if (!ks.IsArray() || o_dim < 0 || o_dim >= ks.rank() || ks.dim(o_dim) == 0) return 0;
  return conv.shape().ElementCount() * (ks.ElementCount() / ks.dim(o_dim));
}

const char* ConvAlgorithmName(rt::ConvAlgorithm a) {
  switch (a) {
    case rt::ConvAlgorithm::kTiles: return "tiles";
    case rt::ConvAlgorithm::kWideK: return "wide_k";
    case rt::ConvAlgorithm::kPlanes: return "planes";
    case rt::ConvAlgorithm::kPlaneFilter: return "plane_filter";
    default: return "auto";
  }
}

// The convolution knobs that can change this convolution's run.
std::vector<Knob> ConvChoicesFor(const Instruction& conv) {
  std::vector<Knob> out;
  const int64_t macs = ConvMacs(conv);
  if (macs < kMinDotMnk) return out;
  if (macs >= kParallelMnk) out.push_back({"t1", "\"hlox_threads\":1"});
  for (rt::ConvAlgorithm a : rt::ConvAlgorithmsFor(conv)) {
    out.push_back({ConvAlgorithmName(a), absl::StrCat("\"hlox_conv_algo\":", static_cast<int>(a))});
  }
  return out;
}

// The dot or convolution of an output fusion (a kOutput fusion holding one; the runtime reads
// its GEMM or convolution keys from the fusion's backend_config,
// runtime/kernels/output_fusion.h), else null.
const Instruction* OutputFusionOp(const Instruction& i) {
  if (i.opcode() != Opcode::kFusion || i.attrs().fusion_kind != FusionKind::kOutput ||
      i.called_computations().size() != 1) {
    return nullptr;
  }
  const Instruction* dot = nullptr;
  for (const auto& f : i.called_computations()[0]->instructions()) {
    if (f->opcode() != Opcode::kDot && f->opcode() != Opcode::kConvolution) continue;
    if (dot != nullptr) return nullptr;
    dot = f.get();
  }
  return dot;
}

// The knobs of a dot or convolution site (empty for other instructions and small ones), with
// the site's rule and features.
std::vector<Knob> KnobsFor(const Instruction& instr, std::string* rule, std::vector<float>* features) {
  const Instruction* dot = OutputFusionOp(instr);
  const Instruction& i = dot != nullptr ? *dot : instr;
  if (i.opcode() == Opcode::kConvolution) {
    *rule = "conv_params";
    *features = {static_cast<float>(i.shape().ElementCount()), static_cast<float>(ConvMacs(i)),
                 static_cast<float>(i.operand(0)->shape().ElementCount()),
                 static_cast<float>(i.operand(1)->shape().ElementCount())};
    return ConvChoicesFor(i);
  }
  std::optional<DotGeometry> g = GeometryOf(i);
  if (!g || g->mnk() < kMinDotMnk) return {};
  *rule = "gemm_params";
  *features = {static_cast<float>(g->batch), static_cast<float>(g->m), static_cast<float>(g->n),
               static_cast<float>(g->k)};
  return GemmChoicesFor(i, *g);
}

// How a fusion's transposing outputs are walked (fused/tile.cc), offered after the block and
// thread choices to fusions that contain a transpose: by name, the keys they set.
const Knob kWalkChoices[] = {{"rows", "\"hlox_tile\":0"}, {"tile16", "\"hlox_tile\":16"}, {"tile32", "\"hlox_tile\":32"}};

bool HasTranspose(const Instruction& fusion) {
  for (const Instruction* i : fusion.called_computations()[0]->PostOrder()) {
    if (i->opcode() == Opcode::kTranspose) return true;
  }
  return false;
}

// The knobs of a fusion's "tune:" site, in choice order after "keep": block size x threads, then
// for a fusion with a transpose the walks of its transposing outputs.
std::vector<Knob> FusionKnobs(const Instruction& fusion) {
  std::vector<Knob> knobs;
  for (int64_t b : kBlocks) {
    for (int t : kThreads) {
      knobs.push_back({absl::StrCat("b", b, t == 1 ? "_t1" : "_tall"),
                       absl::StrCat("\"hlox_block\":", b, ",\"hlox_threads\":", t)});
    }
  }
  if (HasTranspose(fusion)) knobs.insert(knobs.end(), std::begin(kWalkChoices), std::end(kWalkChoices));
  return knobs;
}

void SetConfig(Instruction& instr, const std::string& keys) {
  fusion::SetBackendConfigKeys(instr, keys, kHloxKeys);
}

class CodegenTuning : public Pass {
 public:
  std::string_view name() const override { return "codegen-tuning"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    auto add = [&](const char* prefix, std::string rule, const Instruction& i, std::vector<std::string> choices,
                   std::vector<float> features) {
      DecisionSite s;
      s.id = absl::StrCat(prefix, i.name());
      s.rule = std::move(rule);
      s.instructions = {i.name()};
      s.computation = i.parent()->name();
      s.choices = std::move(choices);
      s.default_choice = 0;
      s.features = std::move(features);
      sites.push_back(std::move(s));
    };
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (Instruction* i : comp->PostOrder()) {
        if (i->opcode() == Opcode::kFusion && i->called_computations().size() == 1 &&
            OutputFusionOp(*i) == nullptr) {
          std::vector<std::string> choices = {"keep"};
          for (const Knob& k : FusionKnobs(*i)) choices.push_back(k.name);
          add("tune:", "codegen_params", *i, std::move(choices),
              {static_cast<float>(i->shape().ElementCount()), static_cast<float>(i->shape().ByteSize()),
               static_cast<float>(fusion::FusedInstructionCount(*i)), static_cast<float>(i->attrs().fusion_kind)});
          continue;
        }
        std::string rule;
        std::vector<float> features;
        std::vector<Knob> knobs = KnobsFor(*i, &rule, &features);
        if (knobs.empty()) continue;
        std::vector<std::string> choices = {"keep"};
        for (const Knob& k : knobs) choices.push_back(k.name);
        add(rule == "conv_params" ? "conv:" : "gemm:", rule, *i, std::move(choices), std::move(features));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
    ApplyReport report;
    std::unordered_map<std::string, Instruction*> by_name = fusion::InstructionsByName(module);
    for (size_t s = 0; s < sites.size(); ++s) {
      if (decisions[s] == 0) continue;
      auto it = by_name.find(sites[s].instructions.empty() ? "" : sites[s].instructions[0]);
      Instruction* instr = it == by_name.end() ? nullptr : it->second;
      const std::string& choice = sites[s].choices[decisions[s]];
      std::string keys;
      if ((sites[s].rule == "gemm_params" || sites[s].rule == "conv_params") && instr != nullptr) {
        // The choice is looked up by name among the knobs this instruction offers now: a stale
        // site (the dot changed shape) is skipped rather than given another knob.
        std::string rule;
        std::vector<float> features;
        for (const Knob& k : KnobsFor(*instr, &rule, &features)) {
          if (choice == k.name && rule == sites[s].rule) keys = k.keys;
        }
      } else if (sites[s].rule == "codegen_params" && instr != nullptr && instr->opcode() == Opcode::kFusion &&
                 instr->called_computations().size() == 1) {
        for (const Knob& k : FusionKnobs(*instr)) {  // by name, as the GEMM knobs: a stale choice is skipped
          if (choice == k.name) keys = k.keys;
        }
      }
      if (keys.empty()) {
        report.stale.push_back(sites[s].id);
        continue;
      }
      SetConfig(*instr, keys);
      ++report.applied;
      report.changes.push_back(absl::StrCat("tuned ", instr->name(), ": ", choice));
    }
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCodegenTuning() { return std::make_unique<CodegenTuning>(); }

}  // namespace hlox
