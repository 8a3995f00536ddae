// The HTTP server thread (cpp-httplib) behind /metrics, /status.json and the dashboard.
#include "monitor/http_monitor.h"

#include <httplib.h>

#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
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

absl::StatusOr<std::string> ReadMetricsToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read metrics token file ", path));
  std::string line;
  std::getline(in, line);
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("metrics token file ", path, " is empty"));
  return token;
}

bool BearerMatches(const std::string& header, const std::string& token) {
  static constexpr std::string_view kPrefix = "Bearer ";
  if (token.empty() || header.size() != kPrefix.size() + token.size() ||
      header.compare(0, kPrefix.size(), kPrefix) != 0) {
    return false;
  }
  // Every byte is compared whatever the earlier ones were.
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(header[kPrefix.size() + i]) ^
            static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

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
  const bool loopback = host == "localhost" || host == "::1" || host == "[::1]" ||
                        proto::IsLoopbackAddress(absl::StrCat("tcp://", host, ":1"));
  if (!loopback && o.token.empty()) {
    // As the broker refuses a public bind without keys: the pages show worker ids, hosts and
    // campaign names.
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to serve metrics on ", o.listen, " (not loopback) without a token; pass "
        "--metrics-token-file FILE or bind 127.0.0.1"));
  }
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
  if (!o.token.empty()) {
    raw->server.set_pre_routing_handler(
        [token = o.token](const httplib::Request& req, httplib::Response& res) {
          if (BearerMatches(req.get_header_value("Authorization"), token)) {
            return httplib::Server::HandlerResponse::Unhandled;
          }
          res.status = 401;
          res.set_header("WWW-Authenticate", "Bearer");
          res.set_content("401: send Authorization: Bearer <token>\n", "text/plain");
          return httplib::Server::HandlerResponse::Handled;
        });
  }
  if (port == 0) {
    raw->port = raw->server.bind_to_any_port(host.c_str());
  } else {
    raw->port = raw->server.bind_to_port(host.c_str(), port) ? port : -1;
  }
  if (raw->port <= 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", o.listen));
  if (!loopback) {
    log::broker().info("metrics on {}: every request needs the bearer token", o.listen);
  }
  raw->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  return std::unique_ptr<HttpMonitor>(new HttpMonitor(std::move(impl)));
}

}  // namespace hlox::monitor
