// The broker's HTTP face for whoever runs the fleet: a Prometheus text endpoint (/metrics), the
// raw status JSON (/status.json) and a small self-refreshing dashboard (/). It runs on its own
// thread and reads the broker only through the control channel, which the broker answers ahead
// of every evaluation, so monitoring never slows or blocks job traffic.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "protocol/curve.h"

namespace hlox::monitor {

// The documented metrics port. Prometheus' exporter registry allocates 9100-9999 (9100 is
// node_exporter) and a scrape target on one of those ports collides with an exporter on the same
// host; 7557 is outside it and clear of Prometheus (9090), Alertmanager (9093), Grafana (3000),
// the usual HTTP alternates (8000, 8080, 8443) and the broker's own 5555/5556.
inline constexpr int kDefaultMetricsPort = 7557;

struct MonitorOptions {
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultMetricsPort);  // HOST:PORT
  std::string control_address;            // the broker's control address
  proto::CurveClientKeys curve;            // keys for a CURVE-secured broker (default: off)
  // Non-empty: every request needs "Authorization: Bearer <token>" (401 otherwise). Empty: only
  // a loopback `listen` is accepted.
  std::string token;
};

// The token in a token file: its first line without surrounding whitespace; an error for an
// unreadable file or an empty token.
absl::StatusOr<std::string> ReadMetricsToken(const std::string& path);
// True when `header` (an Authorization value) is "Bearer <token>"; compares in constant time for
// a given length so the answer's timing does not reveal the token.
bool BearerMatches(const std::string& header, const std::string& token);

class HttpMonitor {
 public:
  // Binds and starts serving; InvalidArgument for a bad HOST:PORT, FailedPrecondition for a
  // non-loopback HOST without a token, Unavailable if it cannot bind.
  static absl::StatusOr<std::unique_ptr<HttpMonitor>> Start(const MonitorOptions& options);
  ~HttpMonitor();
  int port() const;

  class Impl;

 private:
  explicit HttpMonitor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Prometheus exposition text for a broker status JSON (see docs/PROTOCOL.md, control "status").
std::string PrometheusText(const nlohmann::json& status);
// The dashboard page (static HTML+JS that polls /status.json).
const std::string& DashboardHtml();

}  // namespace hlox::monitor
