// Finished jobs, the result cache, coalescing keys and the in-memory record budget; see
// result_cache.h.
#include "broker/result_cache.h"

#include "protocol/protocol.h"

namespace hlox::broker {

absl::Status ResultCache::Reload() {
  return store_->ForEachResult([&](StoredResult&& r) {
    const size_t bytes = r.record.size();
    if (!r.cache_key.empty()) cache_[r.cache_key] = r.job_id;
    if (done_.count(r.job_id)) return;
    const std::string id = r.job_id;
    AddDone(id, DoneJob{std::move(r.record), std::move(r.campaign), std::move(r.status),
                        r.attempts, true});
    KeepResident(id, bytes);
  });
}

void ResultCache::AddDone(const std::string& job_id, DoneJob d) {
  auto [it, fresh] = done_.try_emplace(job_id, std::move(d));
  if (fresh) {
    ++by_campaign_[it->second.campaign];
    ++by_status_[it->second.status];
  }
}

const DoneJob* ResultCache::FindDone(const std::string& job_id) const {
  auto it = done_.find(job_id);
  return it == done_.end() ? nullptr : &it->second;
}

void ResultCache::Forget(const std::string& job_id) {
  auto it = done_.find(job_id);
  if (it == done_.end()) return;
  if (--by_campaign_[it->second.campaign] == 0) by_campaign_.erase(it->second.campaign);
  if (--by_status_[it->second.status] == 0) by_status_.erase(it->second.status);
  done_.erase(it);
}

absl::StatusOr<std::string> ResultCache::RecordOf(const std::string& job_id) {
  auto it = done_.find(job_id);
  if (it == done_.end()) return absl::NotFoundError("no finished job " + job_id);
  if (!it->second.in_store_only) return it->second.record;
  ++store_reads_;
  return store_->ReadRecord(job_id);
}

void ResultCache::MarkCommitted(const std::string& job_id) {
  auto it = done_.find(job_id);
  if (it == done_.end() || it->second.committed) return;
  it->second.committed = true;
  KeepResident(job_id, it->second.record.size());
}

void ResultCache::KeepResident(const std::string& job_id, size_t bytes) {
  resident_.emplace_back(job_id, bytes);
  resident_bytes_ += bytes;
  while (resident_bytes_ > memory_bytes_ && !resident_.empty()) {
    auto [id, size] = std::move(resident_.front());
    resident_.pop_front();
    resident_bytes_ -= size;
    auto it = done_.find(id);
    if (it == done_.end() || it->second.in_store_only) continue;
    std::string().swap(it->second.record);  // the store has it
    it->second.in_store_only = true;
  }
}

std::optional<ResultCache::Hit> ResultCache::Lookup(const std::string& key) {
  auto c = cache_.find(key);
  if (c == cache_.end()) return std::nullopt;
  auto d = done_.find(c->second);
  if (d == done_.end()) return std::nullopt;
  std::optional<JobStatus> status = proto::ParseStatusWireName(d->second.status);
  if (!status) return std::nullopt;  // a store row with an unknown status answers nothing
  absl::StatusOr<std::string> record = RecordOf(d->first);
  if (!record.ok()) return std::nullopt;
  return Hit{std::move(*record), *status};
}

const std::string* ResultCache::InFlight(const std::string& key) const {
  auto it = inflight_.find(key);
  return it == inflight_.end() ? nullptr : &it->second;
}

bool ResultCache::SetInFlight(const std::string& key, const std::string& job_id, bool replace) {
  if (replace) {
    inflight_[key] = job_id;
    return true;
  }
  return inflight_.emplace(key, job_id).second;
}

void ResultCache::EndInFlight(const std::string& key, const std::string& job_id) {
  auto it = inflight_.find(key);
  if (it != inflight_.end() && it->second == job_id) inflight_.erase(it);
}

}  // namespace hlox::broker
