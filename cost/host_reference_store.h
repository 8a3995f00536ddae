// Stored quiet times of the host-speed references (cost/host_reference.h): `hlox calibrate`
// measures them next to the machine's peaks and writes them as JSON at $HLOX_REFERENCE_QUIET,
// else host_reference.json beside the calibration file (cost/calibrate.h). A measurement with
// a reference loads them once per process, so normalized costs from different processes on
// this machine share one scale; without the file the fastest run this process saw is used.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cost/host_reference.h"

namespace hlox {

// $HLOX_REFERENCE_QUIET if set, else host_reference.json in CalibrationPath()'s folder.
std::string ReferenceQuietPath();
// Writes {"compute_seconds": .., "memory_seconds": ..}, creating parent folders.
absl::Status SaveReferenceQuiet(const ReferenceQuiet& quiet, const std::string& path);
// Reads the file above; both times must be positive.
absl::StatusOr<ReferenceQuiet> LoadReferenceQuiet(const std::string& path);
// Once per process: fixes the quiet times from ReferenceQuietPath() when the file is readable
// and no quiet times were fixed yet (SetReferenceQuiet). Cheap after the first call.
void UseStoredReferenceQuiet();

}  // namespace hlox
