// RequestSites (client.h): one sites job on its own connection, for callers that want a module's
// decision points from a fleet without running a search loop of their own.
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/client.h"

namespace hlox::client {

absl::StatusOr<ResultRecord> RequestSites(const std::string& address, std::string module_text,
                                          const std::string& pipeline,
                                          const PipelineDecisions& decisions,
                                          std::chrono::milliseconds timeout,
                                          ClientOptions options) {
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(address, std::move(options));
  if (!c.ok()) return c.status();
  JobSpec job;
  job.kind = proto::kKindSites;
  job.module_text = std::make_shared<const std::string>(std::move(module_text));
  job.pipeline = pipeline;
  job.decisions = decisions;
  absl::StatusOr<std::string> id = (*c)->Submit(std::move(job));
  if (!id.ok()) return id.status();
  // The client is this call's own: the only result it can hand out is this job's.
  std::optional<JobResult> r = (*c)->Next(timeout);
  if (!r) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer to the sites job from ", address, " in ", timeout.count(), " ms"));
  }
  return std::move(r->record);
}

}  // namespace hlox::client
