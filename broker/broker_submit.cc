// SUBMIT, in steps: a finished job id is answered from the store (idempotent resubmit), a job in
// flight gets its new agent, a new job is refused while the store's disk is full (STORE_FULL),
// the module is checked and stored, then the job is added under its
// campaign's class and answered from the result cache, coalesced with an identical job in
// flight, or queued.
#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/logging.h"

namespace hlox::broker {

void Broker::OnSubmit(const std::string& agent, std::string_view body) {
  absl::StatusOr<proto::SubmitMsg> m = proto::DecodeSubmit(body);
  if (!m.ok()) {
    Reject(agent, proto::ErrorCodeFor(m.status()), std::string(m.status().message()),
           proto::PeekJobId(body));
    return;
  }
  if (!CheckCampaignOwner(agent, *m)) return;  // broker_access.cc
  const std::string id = m->job_id;  // a copy: *m is moved into the job below
  if (AnswerFinished(agent, id)) return;
  if (Job* running = queue_.Find(id)) {  // already queued or running: answer the new agent
    running->agent = agent;
    return;
  }
  if (store_health_.full) {
    // Nothing new until the store can keep its result; jobs already taken still finish.
    ++store_health_.refused_submits;
    SendError(agent, id, proto::kErrStoreFull,
              absl::StrCat("the result store's disk is full: ", store_health_.error,
                           "; finished results are held until it has space; submit again later"));
    return;
  }
  if (!AdmitModule(agent, *m)) return;
  if (queue_.pending() >= opts_.max_pending) {
    SendError(agent, id, proto::kErrFull, "broker queue is full; retry later");
    return;
  }
  Job& job = AddJob(agent, std::move(*m));
  if (!job.spec.campaign.empty() && queue_.Cancelled(job.spec.campaign)) {
    CompleteWith(id, JobStatus::kCancelled, "campaign cancelled");
    return;
  }
  if (AnswerFromCache(job)) return;
  queue_.Enqueue(job, false, proto::NowUs());
}

bool Broker::AnswerFinished(const std::string& agent, const std::string& id) {
  const DoneJob* done = results_.FindDone(id);
  if (!done) return false;
  const uint32_t attempts = done->attempts;
  absl::StatusOr<std::string> record = results_.RecordOf(id);
  if (record.ok()) {
    acks_.push_back({agent, {id, attempts, false, std::move(*record)}});
    return true;
  }
  log::broker().error("reading stored result of {}: {}; running it again", id,
                      std::string(record.status().message()));
  results_.Forget(id);
  return false;
}

bool Broker::AdmitModule(const std::string& agent, proto::SubmitMsg& m) {
  if (m.module_text.empty()) {
    if (modules_.count(m.module_hash)) return true;
    SendError(agent, m.job_id, proto::kErrUnknownModule, "send the module text with this job");
    return false;
  }
  // Clients that cannot compute the hash send "" with the text; the broker fills it in.
  const std::string hash = proto::TextHash(m.module_text);
  if (m.module_hash.empty()) m.module_hash = hash;
  if (hash != m.module_hash) {
    SendError(agent, m.job_id, proto::kErrBadModule, "module text does not match module_hash");
    return false;
  }
  if (!modules_.count(m.module_hash)) {
    if (absl::Status st = store_->PutModule(m.module_hash, m.module_text); !st.ok()) {
      log::broker().error("storing module: {}", std::string(st.message()));
    }
    modules_.emplace(m.module_hash, std::move(m.module_text));
  }
  m.module_text.clear();
  return true;
}

Job& Broker::AddJob(const std::string& agent, proto::SubmitMsg m) {
  auto job = std::make_unique<Job>();
  job->agent = agent;
  job->submitted_us = proto::NowUs();
  job->enqueued_ms = job->submitted_us / 1000;
  job->job_class = queue_.ClassFor(m.campaign, m.hardware_class);
  job->spec = std::move(m);
  return queue_.Add(std::move(job));
}

bool Broker::AnswerFromCache(Job& job) {
  if (!job.spec.use_cache || !proto::KindCacheable(job.spec.kind)) return false;
  const std::string id = job.spec.job_id;
  job.cache_key = proto::CacheKey(job.spec, job.job_class);
  if (std::optional<ResultCache::Hit> hit = results_.Lookup(job.cache_key)) {
    ++stats_.cache_hits;
    job.cache_key.clear();  // this job's row must not replace the cache entry
    job.from_cache = true;
    Complete(id, std::move(hit->record), hit->status);
    return true;
  }
  if (const std::string* primary_id = results_.InFlight(job.cache_key)) {
    if (Job* primary = queue_.Find(*primary_id)) {
      ++stats_.cache_hits;
      primary->followers.push_back(id);
      job.cache_key.clear();
      return true;
    }
  }
  results_.SetInFlight(job.cache_key, id, /*replace=*/true);
  return false;
}

}  // namespace hlox::broker
