// Submitting a batch (evaluations, or one paired verdict job) and gathering exactly one result
// per job.
#include "agent/fleet_evaluator.h"

#include <algorithm>
#include <random>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cost/paired.h"
#include "protocol/curve.h"
#include "protocol/protocol.h"

namespace hlox {

absl::StatusOr<FleetConnection> ConnectFleet(const FleetTarget& target) {
  FleetConnection c;
  c.workers = target.workers > 0
                  ? target.workers
                  : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, target.threads));
  c.address = target.broker;
  client::ClientOptions co;
  if (target.broker.empty()) {
    client::EmbeddedOptions eo;
    eo.threads = target.threads;
    eo.db_path = target.db_path;
    HLOX_ASSIGN_OR_RETURN(client::EmbeddedFleet f, client::StartEmbeddedFleet(c.workers, eo));
    c.address = f.address;
    c.fleet = std::move(f);
  } else {
    HLOX_ASSIGN_OR_RETURN(co.curve, proto::LoadCurveClientKeys(target.curve_key, target.broker_key));
  }
  HLOX_ASSIGN_OR_RETURN(c.client, client::Client::Connect(c.address, co));
  return c;
}

FleetEvaluator::FleetEvaluator(std::unique_ptr<client::Client> client, const std::string& module_text,
                               std::string pipeline, std::string campaign, int parallelism)
    : client_(std::move(client)),
      module_text_(std::make_shared<const std::string>(module_text)),
      pipeline_(std::move(pipeline)),
      campaign_(std::move(campaign)),
      parallelism_(std::max(1, parallelism)) {}

std::vector<ResultRecord> FleetEvaluator::Evaluate(const std::vector<PipelineDecisions>& batch) {
  return EvaluateFresh(batch, 0);
}

std::vector<ResultRecord> FleetEvaluator::EvaluateFresh(const std::vector<PipelineDecisions>& batch,
                                                        size_t fresh) {
  std::vector<client::JobSpec> jobs(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    jobs[i].pipeline = pipeline_;
    jobs[i].decisions = batch[i];
    jobs[i].use_cache = i + fresh < batch.size();
  }
  return RunJobs(std::move(jobs));
}

absl::StatusOr<PairedResult> FleetEvaluator::MeasurePaired(const PairedRequest& q) {
  client::JobSpec job;
  job.kind = proto::kKindPaired;
  job.pipeline = q.pipeline;
  job.decisions = q.candidate;
  job.paired.baseline_pipeline = q.baseline_pipeline;
  job.paired.baseline_decisions = q.baseline;
  job.paired.seed = q.seed;
  job.paired.protocol = q.protocol;
  job.use_cache = false;  // a verdict is a fresh measurement (the broker refuses to cache it too)
  std::vector<client::JobSpec> jobs;
  jobs.push_back(std::move(job));
  ResultRecord r = std::move(RunJobs(std::move(jobs))[0]);
  if (r.status != JobStatus::kOk) {
    return absl::FailedPreconditionError(
        absl::StrCat("paired job: ", std::string(JobStatusName(r.status)), ": ", r.message));
  }
  if (!r.paired) return absl::InternalError("paired job: the worker's record has no paired figures");
  measured_by_.where = "fleet";
  measured_by_.worker_id = r.provenance.worker_id;
  measured_by_.hardware_class = r.provenance.hardware_class;
  measured_by_.host = r.provenance.host;
  ++measured_by_.measurements;
  return PairedFromFigures(*r.paired);
}

std::vector<ResultRecord> FleetEvaluator::RunJobs(std::vector<client::JobSpec> jobs) {
  std::vector<ResultRecord> out(jobs.size());
  std::unordered_map<std::string, size_t> slot;
  for (size_t i = 0; i < jobs.size(); ++i) {
    client::JobSpec& job = jobs[i];
    job.id = absl::StrCat(campaign_, "-", next_id_++);
    job.campaign = campaign_;
    job.module_text = module_text_;
    absl::StatusOr<std::string> id = client_->Submit(std::move(job));
    if (!id.ok()) {
      out[i].status = JobStatus::kRunError;
      out[i].message = std::string(id.status().message());
      continue;
    }
    slot[*id] = i;
  }
  while (!slot.empty()) {
    std::optional<client::JobResult> r = client_->Next(std::chrono::milliseconds(1000));
    if (!r) continue;  // the client resubmits on its own if the broker went away
    auto it = slot.find(r->job_id);
    if (it == slot.end()) continue;
    out[it->second] = std::move(r->record);
    slot.erase(it);
  }
  return out;
}

}  // namespace hlox
