// The HTTP server thread (cpp-httplib) behind /metrics, /status.json and the dashboard.
#include "monitor/http_monitor.h"

#include <httplib.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "common/logging.h"

namespace hlox::monitor {

class HttpMonitor::Impl {
 public:
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::string control;
};

HttpMonitor::HttpMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpMonitor::~HttpMonitor() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpMonitor::port() const { return impl_->port; }

absl::StatusOr<std::unique_ptr<HttpMonitor>> HttpMonitor::Start(const MonitorOptions& o) {
  size_t colon = o.listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(o.listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics wants HOST:PORT, got '", o.listen, "'"));
  }
  std::string host = o.listen.substr(0, colon);
  auto impl = std::make_unique<Impl>();
  impl->control = o.control_address;
  Impl* raw = impl.get();
  auto status_json = [raw, curve = o.curve]() -> absl::StatusOr<std::string> {
    return client::ControlRequest(raw->control, "status", "", std::chrono::milliseconds(2000), curve);
  };
  raw->server.Get("/metrics", [status_json](const httplib::Request&, httplib::Response& res) {
    absl::StatusOr<std::string> s = status_json();
    nlohmann::json j = s.ok() ? nlohmann::json::parse(*s, nullptr, false) : nlohmann::json();
    if (!s.ok() || j.is_discarded()) {
      res.status = 503;
      res.set_content(absl::StrCat("# broker unreachable: ", s.ok() ? "bad JSON" : std::string(s.status().message()), "\n"),
                      "text/plain");
      return;
    }
    res.set_content(PrometheusText(j), "text/plain; version=0.0.4; charset=utf-8");
  });
  raw->server.Get("/status.json", [status_json](const httplib::Request&, httplib::Response& res) {
    absl::StatusOr<std::string> s = status_json();
    if (!s.ok()) {
      res.status = 503;
      res.set_content(absl::StrCat("{\"error\":", nlohmann::json(std::string(s.status().message())).dump(), "}"),
                      "application/json");
      return;
    }
    res.set_content(*s, "application/json");
  });
  raw->server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(DashboardHtml(), "text/html; charset=utf-8");
  });
  if (port == 0) {
    raw->port = raw->server.bind_to_any_port(host.c_str());
  } else {
    raw->port = raw->server.bind_to_port(host.c_str(), port) ? port : -1;
  }
  if (raw->port <= 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", o.listen));
  const bool loopback = host == "localhost" || host == "::1" || host == "[::1]" || absl::StartsWith(host, "127.");
  if (!loopback) {
    // Allowed (a Prometheus in another container or pod must reach it), but said out loud: the
    // endpoint has no authentication and shows worker ids, hosts and campaign names.
    log::broker().warn("metrics on {}: /metrics and /status.json are readable by anyone who can reach it",
                       o.listen);
  }
  raw->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  return std::unique_ptr<HttpMonitor>(new HttpMonitor(std::move(impl)));
}

}  // namespace hlox::monitor
