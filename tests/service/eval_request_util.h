// A worker EvalRequest for a module given as HLO text, shared by the worker evaluation tests.
#pragma once

#include <memory>
#include <string>

#include "cost/module_hash.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "worker/evaluator.h"

namespace hlox::worker {

// The request for `text` (parsed; a parse failure is a test failure) under the default
// pipeline, addressed as `hash` (its text hash) and identified by its ModuleHash, with a 20 s run
// timeout.
inline EvalRequest TextRequest(const std::string& text, const std::string& hash) {
  EvalRequest req;
  auto m = ParseModule(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  if (m.ok()) {
    req.module = std::shared_ptr<const Module>(std::move(*m));
    req.module_hash = ModuleHash(*req.module);
  }
  req.text_hash = hash;
  req.pipeline = "default";
  req.run_timeout_ms = 20000;
  return req;
}

}  // namespace hlox::worker
