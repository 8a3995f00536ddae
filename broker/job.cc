// Building a JOB and a cache key from a stored SUBMIT; see job.h.
#include "broker/job.h"

#include <utility>

namespace hlox::broker {

uint32_t RunTimeoutMs(const Job& job, uint32_t default_run_timeout_ms) {
  return job.spec.run_timeout_ms ? job.spec.run_timeout_ms : default_run_timeout_ms;
}

proto::JobMsg JobMsgFor(const Job& job, uint32_t run_timeout_ms, std::string module_text) {
  proto::JobMsg m;
  m.job_id = job.spec.job_id;
  m.attempt = job.attempts;
  m.module_hash = job.spec.module_hash;
  m.module_text = std::move(module_text);
  m.pipeline = job.spec.pipeline;
  m.decisions = job.spec.decisions;
  m.run_timeout_ms = run_timeout_ms;
  m.kind = job.spec.kind;
  m.paired = job.spec.paired;
  return m;
}

}  // namespace hlox::broker
