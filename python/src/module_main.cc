// Entry point of the hlox._hlox extension: registers every binding family on one module.
#include "python/src/bindings.h"

#include "passes/pass.h"

namespace hlox::py {

void ThrowStatus(const absl::Status& status) {
  std::string text(status.message());
  if (IsInvalidDecisions(status)) text = "INVALID_DECISIONS: " + text;
  throw pyb::value_error(text);
}

}  // namespace hlox::py

PYBIND11_MODULE(_hlox, m) {
  m.doc() = "hlox native core: HLO modules, decision sites, CPU runtime, evaluation, fleet client";
  hlox::py::BindIr(m);
  hlox::py::BindPasses(m);
  hlox::py::BindRuntime(m);
  hlox::py::BindEval(m);
}
