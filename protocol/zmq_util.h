// ZeroMQ socket helpers shared by broker, worker and agent: sockets created with the options
// every hlox socket needs (linger, ZMQ_MAXMSGSIZE, high-water marks, ROUTER_MANDATORY on
// routers) and non-blocking multipart send/receive that report failure instead of blocking.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/curve.h"
#include "protocol/protocol.h"
#include "zmq.hpp"

namespace hlox::proto {

inline constexpr int kLingerMs = 200;     // a context never blocks longer than this on exit
inline constexpr int kHighWaterMark = 200000;

// A ROUTER with ROUTER_MANDATORY and ROUTER_HANDOVER, bound to `addr`. A non-empty Z85
// `curve_secret` makes it a CURVE server (clients are vetted by the context's ZAP handler).
absl::StatusOr<zmq::socket_t> BindRouter(zmq::context_t& ctx, const std::string& addr,
                                         const std::string& curve_secret = "");
// A DEALER with routing id `identity` (if non-empty), connected to `addr`; a CURVE client of
// the broker when `curve` is given and enabled.
absl::StatusOr<zmq::socket_t> ConnectDealer(zmq::context_t& ctx, const std::string& addr,
                                            const std::string& identity,
                                            const CurveClientKeys* curve = nullptr);

// Result of a non-blocking send.
enum class SendResult { kOk, kWouldBlock, kUnreachable, kError };

// Sends [identity?] header body without blocking. identity empty = none (DEALER side).
SendResult SendMsg(zmq::socket_t& s, std::string_view identity, Command cmd,
                   std::string_view body);

// A received message: routing identity (ROUTER side only) and frames after it.
struct Received {
  std::string identity;
  std::vector<zmq::message_t> frames;
};
// Receives one whole multipart message without blocking; false when none is waiting.
bool RecvMsg(zmq::socket_t& s, bool router, Received* out);

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace hlox::proto
