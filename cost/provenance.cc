// Machine identity for result provenance, read once per process.
#include "cost/provenance.h"

#include <unistd.h>

#include <thread>

#include "common/build_info.h"
#include "common/cpu_isa.h"

namespace hlox {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

int CoreCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

Provenance MachineProvenance() {
  Provenance p;
  p.host = HostName();
  p.cpu = CpuModelName();
  p.isa = std::string(IsaName(ActiveIsa()));
  p.cores = CoreCount();
  p.hlox_version = HLOX_VERSION;
  p.build_id = AnnouncedBuildId();
  return p;
}

}  // namespace hlox
