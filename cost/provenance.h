// Where a measurement came from: host name, CPU model, ISA level, core count, hlox version.
// Filled into every result record so costs from different machines or instruction sets are
// never silently compared.
#pragma once

#include <string>

#include "common/cpu_isa.h"  // CpuModelName()
#include "cost/result.h"

namespace hlox {

std::string HostName();
int CoreCount();  // hardware threads the OS reports
// Host, CPU, the active ISA level (ActiveIsa() now), cores, version and build id filled in; the caller
// adds threads, protocol, seed and ids.
Provenance MachineProvenance();

}  // namespace hlox
