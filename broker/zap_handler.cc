// The ZAP handler thread; see zap_handler.h. Requests (RFC 27): version "1.0", request id,
// domain, address, routing id, mechanism, then credentials (for CURVE the client's 32-byte
// public key). Replies: version, request id, status code, status text, user id, metadata.
#include "broker/zap_handler.h"

#include <zmq.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "protocol/zmq_util.h"

namespace hlox::broker {
namespace {

std::string Frame(const zmq::message_t& m) {
  return std::string(static_cast<const char*>(m.data()), m.size());
}

std::string Z85(const std::string& key32) {
  char out[41] = {};
  const auto* bytes = reinterpret_cast<const uint8_t*>(key32.data());
  if (key32.size() != 32 || zmq_z85_encode(out, bytes, 32) == nullptr) {
    return "(malformed key)";
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ZapHandler>> ZapHandler::Start(zmq::context_t& ctx,
                                                              std::vector<std::string> allowed) {
  std::sort(allowed.begin(), allowed.end());
  try {
    zmq::socket_t s(ctx, zmq::socket_type::rep);
    s.set(zmq::sockopt::linger, 0);
    s.bind("inproc://zeromq.zap.01");
    std::unique_ptr<ZapHandler> h(new ZapHandler(ctx, std::move(s), std::move(allowed)));
    h->thread_ = std::thread([raw = h.get()] { raw->Main(); });
    return h;
  } catch (const zmq::error_t& e) {
    return absl::UnavailableError(absl::StrCat("ZAP handler: ", e.what()));
  }
}

absl::Status ZapHandler::Watch(zmq::socket_t& sock, const std::string& label) {
  std::string ep = absl::StrCat("inproc://hlox-handshake-monitor-", watched_++);
  if (zmq_socket_monitor(sock.handle(), ep.c_str(),
                         ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
    return absl::InternalError(absl::StrCat("socket monitor: ", zmq_strerror(zmq_errno())));
  }
  try {
    zmq::socket_t pair(ctx_, zmq::socket_type::pair);
    pair.set(zmq::sockopt::linger, 0);
    pair.connect(ep);
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(Monitor{std::move(pair), label});
  } catch (const zmq::error_t& e) {
    return absl::InternalError(absl::StrCat("socket monitor: ", e.what()));
  }
  return absl::OkStatus();
}

ZapHandler::~ZapHandler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  for (Monitor& m : monitors_) m.sock.close();
  for (Monitor& m : pending_) m.sock.close();
  sock_.close();
}

void ZapHandler::LogRefusal(const std::string& why) {
  refused_.fetch_add(1);
  // One line per refusal, at most one a second so a flood cannot fill the log.
  int64_t now = proto::NowMs();
  if (now - last_log_ms_ >= 1000) {
    std::string more =
        unlogged_ ? absl::StrCat(" (", unlogged_, " more refused since the last line)") : "";
    log::broker().warn("refused connection: {}{}", why, more);
    last_log_ms_ = now;
    unlogged_ = 0;
  } else {
    ++unlogged_;
  }
}

void ZapHandler::OnMonitorEvent(Monitor& m) {
  zmq::message_t event, endpoint;
  if (!m.sock.recv(event, zmq::recv_flags::dontwait)) return;
  if (event.more()) (void)m.sock.recv(endpoint, zmq::recv_flags::none);
  uint16_t id = 0;
  if (event.size() >= 2) std::memcpy(&id, event.data(), 2);
  if (id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
    LogRefusal(absl::StrCat("handshake failed on the ", m.label, " socket (",
                            endpoint.to_string(), "): client without CURVE keys for this broker"));
  }
}

void ZapHandler::SetAllowed(std::vector<std::string> allowed) {
  std::sort(allowed.begin(), allowed.end());
  std::lock_guard<std::mutex> lock(mu_);
  allowed_ = std::move(allowed);
}

std::string ZapHandler::Decide(const std::vector<zmq::message_t>& req, std::string* why,
                               std::string* user_id) {
  if (req.size() < 6 || Frame(req[0]) != "1.0") {
    *why = "malformed ZAP request";
    return "400";
  }
  const std::string mechanism = Frame(req[5]);
  const std::string address = Frame(req[3]);
  if (mechanism != "CURVE" || req.size() < 7 || req[6].size() != 32) {
    *why = absl::StrCat("mechanism ", mechanism, " from ", address, " (CURVE required)");
    return "400";
  }
  const std::string key = Frame(req[6]);
  bool allowed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    allowed = std::binary_search(allowed_.begin(), allowed_.end(), key);
  }
  if (allowed) {
    *user_id = Z85(key);
    return "200";
  }
  *why = absl::StrCat("unknown CURVE key ", Z85(key), " from ", address);
  return "400";
}

void ZapHandler::Answer() {
  std::vector<zmq::message_t> req;
  bool more = true;
  while (more) {
    zmq::message_t m;
    if (!sock_.recv(m, zmq::recv_flags::none)) break;
    more = m.more();
    if (req.size() < 16) req.push_back(std::move(m));
  }
  std::string why, user_id;
  std::string code = Decide(req, &why, &user_id);
  if (code == "200") {
    admitted_.fetch_add(1);
  } else {
    LogRefusal(why);
  }
  std::string request_id = req.size() > 1 ? Frame(req[1]) : "";
  sock_.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  sock_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
  sock_.send(zmq::buffer(code), zmq::send_flags::sndmore);
  sock_.send(zmq::buffer(code == "200" ? std::string("OK") : std::string("not allowed")),
             zmq::send_flags::sndmore);
  sock_.send(zmq::buffer(user_id), zmq::send_flags::sndmore);
  sock_.send(zmq::str_buffer(""), zmq::send_flags::none);     // metadata
}

void ZapHandler::Main() {
  while (!stop_.load()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Monitor& m : pending_) monitors_.push_back(std::move(m));
      pending_.clear();
    }
    std::vector<zmq::pollitem_t> items = {{static_cast<void*>(sock_), 0, ZMQ_POLLIN, 0}};
    for (Monitor& m : monitors_) items.push_back({static_cast<void*>(m.sock), 0, ZMQ_POLLIN, 0});
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
      if (items[0].revents & ZMQ_POLLIN) Answer();
      for (size_t i = 0; i < monitors_.size(); ++i) {
        if (items[i + 1].revents & ZMQ_POLLIN) OnMonitorEvent(monitors_[i]);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      log::broker().error("ZAP handler: {}", e.what());
    }
  }
}

}  // namespace hlox::broker
