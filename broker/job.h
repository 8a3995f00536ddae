// A job as the broker holds it between SUBMIT and its result, and the JOB message a worker gets
// for it, built here only, so a field added to SubmitMsg reaches the worker by an edit in this
// one place. Its result-cache key is proto::CacheKey(spec, class), which covers the kind's fields.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "protocol/protocol.h"

namespace hlox::broker {

struct Job {
  proto::SubmitMsg spec;          // module_text cleared
  std::string agent;              // identity results go to
  std::string cache_key;          // "" when caching is off
  std::string class_key;          // cache key under the class it was dispatched to, when that
                                  // differs (so twins pinned to that class coalesce with it)
  std::string job_class;          // class it queues under ("" = any)
  bool running = false;
  bool queued = false;            // has a live entry in its class queue
  bool from_cache = false;        // answered by the result cache (RESULT cached = true)
  uint32_t attempts = 0;
  std::set<std::string> crashed_on;  // worker identities it was running on when they died
  std::string worker;             // identity of the worker holding its lease
  int64_t lease_deadline_ms = 0, enqueued_ms = 0, submitted_us = 0;
  int64_t enqueued_us = 0, dispatched_us = 0;  // last queued / leased (monitoring)
  std::vector<std::string> followers;  // coalesced identical jobs
};

// The run timeout a job's lease is given: its own, else `default_run_timeout_ms`.
uint32_t RunTimeoutMs(const Job& job, uint32_t default_run_timeout_ms);

// The JOB message for the job's current attempt; `module_text` is "" when the worker has it.
proto::JobMsg JobMsgFor(const Job& job, uint32_t run_timeout_ms, std::string module_text);

}  // namespace hlox::broker
