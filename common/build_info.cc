// The build id; see build_info.h. kBuildId is defined in the generated build_id.cc.
#include "common/build_info.h"

#include <cstdlib>

namespace hlox {

extern const char kBuildId[];

std::string_view BuildId() { return kBuildId; }

const std::string& AnnouncedBuildId() {
  static const std::string id = [] {
    const char* env = std::getenv(kBuildIdEnv);
    // Cut to a length every READY decoder accepts (names are at most 256 bytes on the wire).
    return env && *env ? std::string(env).substr(0, 128) : std::string(kBuildId);
  }();
  return id;
}

}  // namespace hlox
