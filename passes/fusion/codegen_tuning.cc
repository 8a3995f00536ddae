// CodegenTuning: code-generation parameters of each fused loop as decisions (Xtat-style joint
// tuning with fusion). One site per fusion instruction ("tune:<fusion>"); choice 0 "keep"
// leaves the runtime defaults, the others set the block size (elements per block of the fused
// loop) and the thread count (1, or 0 = every pool thread) in the fusion's backend_config as
// JSON keys hlox_block / hlox_threads, which FusionKernel reads. Sites never overlap.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace hlox {
namespace {

constexpr int64_t kBlocks[] = {1024, 4096, 16384};
constexpr int kThreads[] = {1, 0};

std::vector<std::string> Choices() {
  std::vector<std::string> c = {"keep"};
  for (int64_t b : kBlocks) {
    for (int t : kThreads) c.push_back(absl::StrCat("b", b, t == 1 ? "_t1" : "_tall"));
  }
  return c;
}

// Removes earlier hlox_block/hlox_threads keys so re-tuning does not stack them.
std::string StripHloxKeys(std::string config) {
  for (const char* key : {"\"hlox_block\":", "\"hlox_threads\":"}) {
    size_t pos = config.find(key);
    if (pos == std::string::npos) continue;
    size_t end = config.find_first_of(",}", pos);
    if (end == std::string::npos) continue;
    if (config[end] == ',') ++end;
    config.erase(pos, end - pos);
  }
  if (config.size() >= 2 && config[config.size() - 2] == ',' && config.back() == '}') {
    config.erase(config.size() - 2, 1);
  }
  return config;
}

std::string WithConfig(const std::string& old, int64_t block, int threads) {
  std::string keys = absl::StrCat("\"hlox_block\":", block, ",\"hlox_threads\":", threads);
  std::string rest = StripHloxKeys(old);
  if (rest.size() >= 2 && rest.front() == '{' && rest.back() == '}') {
    std::string inner = rest.substr(1, rest.size() - 2);
    return inner.empty() ? absl::StrCat("{", keys, "}") : absl::StrCat("{", keys, ",", inner, "}");
  }
  return absl::StrCat("{", keys, "}");
}

class CodegenTuning : public Pass {
 public:
  std::string_view name() const override { return "codegen-tuning"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (Instruction* i : comp->PostOrder()) {
        if (i->opcode() != Opcode::kFusion || i->called_computations().size() != 1) continue;
        DecisionSite s;
        s.id = absl::StrCat("tune:", i->name());
        s.rule = "codegen_params";
        s.instructions = {i->name()};
        s.computation = comp->name();
        s.choices = Choices();
        s.default_choice = 0;
        s.features = {static_cast<float>(i->shape().ElementCount()),
                      static_cast<float>(i->shape().ByteSize()),
                      static_cast<float>(fusion::FusedInstructionCount(*i)),
                      static_cast<float>(i->attrs().fusion_kind)};
        sites.push_back(std::move(s));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
    ApplyReport report;
    std::unordered_map<std::string, Instruction*> by_name;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (const auto& i : comp->instructions()) by_name[i->name()] = i.get();
    }
    for (size_t s = 0; s < sites.size(); ++s) {
      if (decisions[s] == 0) continue;
      auto it = by_name.find(sites[s].instructions.empty() ? "" : sites[s].instructions[0]);
      if (it == by_name.end() || it->second->opcode() != Opcode::kFusion) {
        report.stale.push_back(sites[s].id);
        continue;
      }
      int c = decisions[s] - 1;
      int64_t block = kBlocks[c / 2];
      int threads = kThreads[c % 2];
      Attributes& a = it->second->attrs();
      a.backend_config = WithConfig(a.has_backend_config ? a.backend_config : "", block, threads);
      a.has_backend_config = true;
      ++report.applied;
      report.changes.push_back(absl::StrCat("tuned ", it->first, ": ", sites[s].choices[decisions[s]]));
    }
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCodegenTuning() { return std::make_unique<CodegenTuning>(); }

}  // namespace hlox
