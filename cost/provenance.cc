// Machine identity for result provenance, read once per process.
#include "cost/provenance.h"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace hlox {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string CpuModel() {
  static const std::string model = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        size_t colon = line.find(':');
        if (colon != std::string::npos) {
          size_t b = line.find_first_not_of(" \t", colon + 1);
          return b == std::string::npos ? std::string("unknown") : line.substr(b);
        }
      }
    }
    return std::string("unknown");
  }();
  return model;
}

int CoreCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

Provenance MachineProvenance() {
  Provenance p;
  p.host = HostName();
  p.cpu = CpuModel();
  p.cores = CoreCount();
  p.hlox_version = HLOX_VERSION;
  return p;
}

}  // namespace hlox
