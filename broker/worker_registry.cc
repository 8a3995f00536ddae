// Registered workers, their slots, leases and modules; see worker_registry.h.
#include "broker/worker_registry.h"

#include <algorithm>

namespace hlox::broker {

Worker& WorkerRegistry::Register(const std::string& identity, proto::ReadyMsg caps,
                                 int64_t now_ms) {
  Worker& w = workers_[identity];
  w.identity = identity;
  w.caps = std::move(caps);
  w.last_seen_ms = w.registered_ms = now_ms;
  w.local = w.caps.host == host_;
  for (uint32_t i = 0; i < w.caps.credit; ++i) ready_[w.caps.hardware_class].push_back(identity);
  return w;
}

Worker* WorkerRegistry::Find(const std::string& identity) {
  auto it = workers_.find(identity);
  return it == workers_.end() ? nullptr : &it->second;
}

Worker* WorkerRegistry::FindByName(const std::string& name) {
  Worker* found = nullptr;
  for (auto& [id, w] : workers_) {
    if (w.caps.worker_id == name || id == name) found = &w;
  }
  return found;
}

std::vector<std::string> WorkerRegistry::Lose(const std::string& identity, int64_t now_ms) {
  auto it = workers_.find(identity);
  if (it == workers_.end()) return {};
  std::vector<std::string> leased(it->second.jobs.begin(), it->second.jobs.end());
  lost_recent_.emplace_back(now_ms, it->second);
  if (lost_recent_.size() > kLostKept) lost_recent_.pop_front();
  if (it->second.local && !it->second.jobs.empty()) --local_busy_;
  workers_.erase(it);
  return leased;
}

void WorkerRegistry::Remove(const std::string& identity) {
  auto it = workers_.find(identity);
  if (it == workers_.end()) return;
  if (it->second.local && !it->second.jobs.empty()) --local_busy_;
  workers_.erase(it);
}

void WorkerRegistry::AddLease(Worker& w, const std::string& job_id) {
  if (w.jobs.insert(job_id).second && w.jobs.size() == 1 && w.local) ++local_busy_;
}

bool WorkerRegistry::EndLease(Worker& w, const std::string& job_id) {
  if (w.jobs.erase(job_id)) {
    if (w.jobs.empty() && w.local) --local_busy_;
    if (!w.draining) ready_[w.caps.hardware_class].push_back(w.identity);
  }
  return w.draining && w.jobs.empty();
}

bool WorkerRegistry::NeedsModule(Worker& w, const std::string& module_hash) {
  return w.modules.insert(module_hash).second;
}

Worker* WorkerRegistry::NextReady(std::deque<std::string>& slots) {
  while (!slots.empty()) {
    Worker* w = Find(slots.front());
    if (w && !w->draining && w->jobs.size() < w->caps.credit) return w;
    slots.pop_front();  // stale slot
  }
  return nullptr;
}

std::vector<std::string> WorkerRegistry::Silent(int64_t now_ms, int64_t expiry_ms) const {
  std::vector<std::string> ids;
  for (const auto& [id, w] : workers_) {
    if (now_ms - w.last_seen_ms > expiry_ms) ids.push_back(id);
  }
  return ids;
}

void WorkerRegistry::Forgive(int64_t stall_ms, int64_t now_ms) {
  for (auto& [id, w] : workers_) w.last_seen_ms = std::min(now_ms, w.last_seen_ms + stall_ms);
}

std::vector<std::string> WorkerRegistry::Identities() const {
  std::vector<std::string> ids;
  ids.reserve(workers_.size());
  for (const auto& [id, w] : workers_) ids.push_back(id);
  return ids;
}

}  // namespace hlox::broker
