// Socket setup and non-blocking multipart I/O; see zmq_util.h.
#include "protocol/zmq_util.h"

#include "absl/strings/str_cat.h"

namespace hlox::proto {
namespace {

void CommonOptions(zmq::socket_t& s) {
  s.set(zmq::sockopt::linger, kLingerMs);
  s.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxMessageBytes));
  s.set(zmq::sockopt::sndhwm, kHighWaterMark);
  s.set(zmq::sockopt::rcvhwm, kHighWaterMark);
}

}  // namespace

absl::StatusOr<zmq::socket_t> BindRouter(zmq::context_t& ctx, const std::string& addr,
                                         const std::string& curve_secret) {
  try {
    zmq::socket_t s(ctx, zmq::socket_type::router);
    CommonOptions(s);
    if (!curve_secret.empty()) {
      s.set(zmq::sockopt::curve_server, true);
      s.set(zmq::sockopt::curve_secretkey, curve_secret);
      s.set(zmq::sockopt::zap_domain, "hlox");
    }
    s.set(zmq::sockopt::router_mandatory, 1);
    s.set(zmq::sockopt::router_handover, 1);
    s.bind(addr);
    return s;
  } catch (const zmq::error_t& e) {
    return absl::UnavailableError(absl::StrCat("bind ", addr, ": ", e.what()));
  }
}

absl::StatusOr<zmq::socket_t> ConnectDealer(zmq::context_t& ctx, const std::string& addr,
                                            const std::string& identity,
                                            const CurveClientKeys* curve) {
  try {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    CommonOptions(s);
    if (curve != nullptr && curve->enabled()) {
      absl::StatusOr<std::string> pub = CurvePublicKey(curve->secret_key);
      if (!pub.ok()) return pub.status();
      s.set(zmq::sockopt::curve_serverkey, curve->server_key);
      s.set(zmq::sockopt::curve_publickey, *pub);
      s.set(zmq::sockopt::curve_secretkey, curve->secret_key);
    }
    if (!identity.empty()) s.set(zmq::sockopt::routing_id, identity);
    s.set(zmq::sockopt::reconnect_ivl, 50);
    s.set(zmq::sockopt::reconnect_ivl_max, 1000);
    s.connect(addr);
    return s;
  } catch (const zmq::error_t& e) {
    return absl::UnavailableError(absl::StrCat("connect ", addr, ": ", e.what()));
  }
}

SendResult SendMsg(zmq::socket_t& s, std::string_view identity, Command cmd,
                   std::string_view body) {
  try {
    char header[4] = {'H', 'X', static_cast<char>(kVersion), static_cast<char>(cmd)};
    if (!identity.empty()) {
      if (!s.send(zmq::buffer(identity.data(), identity.size()),
                  zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return SendResult::kWouldBlock;
      }
    }
    // Once the first frame is queued the rest of the message goes with it atomically.
    auto r = s.send(zmq::buffer(header, 4), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (!r) return SendResult::kWouldBlock;
    r = s.send(zmq::buffer(body.data(), body.size()), zmq::send_flags::dontwait);
    if (!r) return SendResult::kWouldBlock;
    return SendResult::kOk;
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) return SendResult::kUnreachable;
    return SendResult::kError;
  }
}

bool RecvMsg(zmq::socket_t& s, bool router, Received* out) {
  out->identity.clear();
  out->frames.clear();
  zmq::message_t m;
  try {
    if (!s.recv(m, zmq::recv_flags::dontwait)) return false;
    bool more = m.more();
    if (router) {
      out->identity.assign(static_cast<const char*>(m.data()), m.size());
    } else {
      out->frames.push_back(std::move(m));
    }
    while (more) {
      zmq::message_t f;
      if (!s.recv(f, zmq::recv_flags::none)) break;
      more = f.more();
      // Bound the frame count so a hostile sender cannot make us hold thousands of frames.
      if (out->frames.size() < 8) out->frames.push_back(std::move(f));
    }
    return true;
  } catch (const zmq::error_t&) {
    return false;
  }
}

}  // namespace hlox::proto
