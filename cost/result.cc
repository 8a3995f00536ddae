// Job status names, the one spelling every part of hlox (JSON, wire protocol, CLI) uses.
#include "cost/result.h"

namespace hlox {

std::string_view JobStatusName(JobStatus s) {
  switch (s) {
    case JobStatus::kOk: return "OK";
    case JobStatus::kWrongOutput: return "WRONG_OUTPUT";
    case JobStatus::kInvalidDecisions: return "INVALID_DECISIONS";
    case JobStatus::kRunError: return "RUN_ERROR";
    case JobStatus::kTimeout: return "TIMEOUT";
    case JobStatus::kPoison: return "POISON";
    case JobStatus::kCancelled: return "CANCELLED";
    case JobStatus::kResourceExhausted: return "RESOURCE_EXHAUSTED";
  }
  return "UNKNOWN";
}

std::optional<JobStatus> ParseJobStatus(std::string_view s) {
  for (JobStatus st : {JobStatus::kOk, JobStatus::kWrongOutput, JobStatus::kInvalidDecisions,
                       JobStatus::kRunError, JobStatus::kTimeout, JobStatus::kPoison,
                       JobStatus::kCancelled, JobStatus::kResourceExhausted}) {
    if (JobStatusName(st) == s) return st;
  }
  return std::nullopt;
}

}  // namespace hlox
