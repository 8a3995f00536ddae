// Where a measurement came from: host name, CPU model, core count, hlox version. Filled into
// every result record so costs from different machines are never silently compared.
#pragma once

#include <string>

#include "cost/result.h"

namespace hlox {

std::string HostName();
// "model name" of /proc/cpuinfo, or "unknown".
std::string CpuModel();
int CoreCount();  // hardware threads the OS reports
// Host, CPU, cores and version filled in; the caller adds threads, protocol, seed and ids.
Provenance MachineProvenance();

}  // namespace hlox
