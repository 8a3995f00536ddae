// Which build this process is: the hlox version, the git commit it was built from and whether
// the tree had uncommitted changes, as "0.1.0+1a2b3c4d5e6f[-dirty]" ("0.1.0+unknown-commit"
// outside git). Captured at every build by cmake/build_id.cmake. Workers announce it in READY,
// records carry it in their provenance, and `hlox status` shows a fleet with more than one.
#pragma once

#include <string>
#include <string_view>

namespace hlox {

// Environment variable that replaces the build id this process announces (READY, record
// provenance), for skew drills: a fleet of one build that reports itself as mixed.
inline constexpr char kBuildIdEnv[] = "HLOX_BUILD_ID";

// The id of the build this binary came from (never empty).
std::string_view BuildId();
// The build id this process announces: $HLOX_BUILD_ID when set and not empty, else BuildId().
// Read once per process.
const std::string& AnnouncedBuildId();

}  // namespace hlox
