// Reading and writing pipeline decisions (docs/DECISIONS.md). Two equivalent forms:
//   JSON:    {"pipeline": "default", "decisions": {"fusion#0": [1,0,1], "cse#0": [1]}}
//   compact: default;fusion#0=1,0,1;cse#0=1
// The pipeline name is optional in both (empty string when absent).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hlox {

struct DecisionsFile {
  std::string pipeline;
  PipelineDecisions decisions;
};

// Parses either form (JSON when the text starts with '{'). Malformed text, keys without
// "#<k>" or non-integer choices are INVALID_DECISIONS errors that say what and where.
absl::StatusOr<DecisionsFile> ParseDecisions(std::string_view text);
// Reads and parses a file; an unreadable file is NotFound. An empty path (no file given) is an
// empty DecisionsFile.
absl::StatusOr<DecisionsFile> ReadDecisionsFile(const std::string& path);
// The pipeline a command runs: `flag` when given, else the file's, else "default".
std::string EffectivePipeline(const std::string& flag, const DecisionsFile& file);
// Canonical JSON (keys sorted, one line).
std::string DecisionsToJson(const DecisionsFile& file);
// Canonical compact form.
std::string DecisionsToCompact(const DecisionsFile& file);

}  // namespace hlox
