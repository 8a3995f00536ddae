// The broker's HTTP face for whoever runs the fleet: a Prometheus text endpoint (/metrics), the
// raw status JSON (/status.json) and a small self-refreshing dashboard (/). It runs on its own
// thread and reads the broker only through the control channel, which the broker answers ahead
// of every evaluation, so monitoring never slows or blocks job traffic.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "broker/curve.h"
#include "nlohmann/json.hpp"

namespace hlox::monitor {

struct MonitorOptions {
  std::string listen = "127.0.0.1:9100";  // HOST:PORT
  std::string control_address;            // the broker's control address
  proto::CurveClientKeys curve;            // keys for a CURVE-secured broker (default: off)
};

class HttpMonitor {
 public:
  // Binds and starts serving; InvalidArgument for a bad HOST:PORT, Unavailable if it cannot bind.
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
