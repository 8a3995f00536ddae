// Stand-in for cost/EvaluateCandidate, used only while cost/evaluate.cc does not exist yet (the
// worker's CMakeLists defines HLOX_HAVE_EVALUATE once it does). It honours the runtime's
// test-only custom calls (abort, hang) so the service's crash and timeout paths stay testable.
#include <cstdlib>
#include <string>
#include <thread>

#include "cost/provenance.h"
#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox::worker {

ResultRecord StandInEvaluate(const Module& module, const std::string& text_hint,
                             const std::string& pipeline) {
  const char* tt = std::getenv("HLOX_TEST_TARGETS");
  if (tt && std::string(tt) == "1") {
    if (text_hint.find("__hlox$abort") != std::string::npos) std::abort();
    if (text_hint.find("__hlox$hang") != std::string::npos) {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  ResultRecord r;
  r.status = JobStatus::kOk;
  r.pipeline = pipeline;
  r.instruction_count = module.InstructionCount();
  r.analytical.op_count = module.InstructionCount();
  r.provenance = MachineProvenance();
  return r;
}

}  // namespace hlox::worker
