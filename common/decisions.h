// Decision vectors, the one vocabulary every layer shares: passes apply them, the protocol
// carries them, agents choose them. Standard library only, so the wire layer can name them
// without the IR or the passes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hlox {

// One choice per decision site of one pass invocation, in the order FindSites returned them.
using DecisionVector = std::vector<int32_t>;

// A pipeline's decisions, addressed per pass invocation ("simplify#0", "fusion#0", ...).
// Invocations without an entry use their pass's default policy.
using PipelineDecisions = std::map<std::string, DecisionVector>;

}  // namespace hlox
