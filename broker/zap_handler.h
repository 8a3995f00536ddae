// The broker's ZAP handler (ZeroMQ RFC 27): an inproc REP socket at "inproc://zeromq.zap.01" in
// the broker's context, answering every CURVE handshake on the broker's sockets. Only clients
// whose public key is on the allow-list get "200" with the key's Z85 text as User-Id (ZeroMQ
// then exposes it as the "User-Id" property of every message on that connection, which the
// broker maps to the key's roles); everything else gets "400" and a log line.
// It must be bound before the CURVE sockets bind: CURVE without a ZAP handler admits anyone who
// knows the server's public key.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "zmq.hpp"

namespace hlox::broker {

class ZapHandler {
 public:
  // Binds the ZAP endpoint in `ctx` and starts the handler thread. `allowed` holds 32-byte
  // binary public keys.
  static absl::StatusOr<std::unique_ptr<ZapHandler>> Start(zmq::context_t& ctx,
                                                           std::vector<std::string> allowed);
  // Also logs (and counts as refused) handshakes that fail on `sock` before ZAP is asked: a
  // client with no key or not speaking CURVE. `label` names the socket in the log line.
  absl::Status Watch(zmq::socket_t& sock, const std::string& label);
  // Thread-safe: replaces the allow-list (32-byte binary keys) for handshakes from now on;
  // connections already admitted stay open (the broker's role check governs them).
  void SetAllowed(std::vector<std::string> allowed);
  // Stops and joins the thread and closes its sockets (before the context is closed).
  ~ZapHandler();
  // Handshakes admitted and refused so far.
  int64_t admitted() const { return admitted_.load(); }
  int64_t refused() const { return refused_.load(); }

 private:
  struct Monitor {
    zmq::socket_t sock;  // PAIR connected to a zmq_socket_monitor endpoint
    std::string label;
  };
  ZapHandler(zmq::context_t& ctx, zmq::socket_t s, std::vector<std::string> allowed)
      : ctx_(ctx), sock_(std::move(s)), allowed_(std::move(allowed)) {}
  void Main();
  void Answer();
  void OnMonitorEvent(Monitor& m);
  void LogRefusal(const std::string& why);
  // The reply frames' status code for one request (frames after the REP envelope).
  // `user_id` gets the client key's Z85 text when admitted.
  std::string Decide(const std::vector<zmq::message_t>& req, std::string* why,
                     std::string* user_id);

  zmq::context_t& ctx_;
  zmq::socket_t sock_;
  std::mutex mu_;
  std::vector<std::string> allowed_;  // sorted; under mu_ (SetAllowed runs on another thread)
  std::vector<Monitor> pending_;      // handed to the thread under mu_
  std::vector<Monitor> monitors_;     // the thread's own
  int watched_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> admitted_{0}, refused_{0};
  int64_t last_log_ms_ = 0, unlogged_ = 0;
  std::thread thread_;
};

}  // namespace hlox::broker
