// Key files, allow-lists and the loopback rule; see curve.h.
#include "protocol/curve.h"

#include <zmq.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hlox::proto {

absl::StatusOr<std::string> DecodeZ85Key(const std::string& z85) {
  if (z85.size() != 40) return absl::InvalidArgumentError("a CURVE key is 40 Z85 characters");
  uint8_t bin[32];
  if (zmq_z85_decode(bin, z85.c_str()) == nullptr) {
    return absl::InvalidArgumentError("not a Z85 CURVE key");
  }
  return std::string(reinterpret_cast<const char*>(bin), 32);
}

absl::StatusOr<std::string> ReadZ85KeyFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read key file ", path));
  std::string text, key;
  std::getline(in, text);
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) key.push_back(c);
  }
  absl::StatusOr<std::string> bin = DecodeZ85Key(key);
  if (!bin.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", bin.status().message()));
  return key;
}

absl::StatusOr<std::string> CurvePublicKey(const std::string& secret_z85) {
  if (!DecodeZ85Key(secret_z85).ok()) return absl::InvalidArgumentError("bad CURVE secret key");
  char pub[41];
  if (zmq_curve_public(pub, secret_z85.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("this libzmq has no CURVE support: ", zmq_strerror(zmq_errno())));
  }
  return std::string(pub, 40);
}

absl::StatusOr<CurveClientKeys> LoadCurveClientKeys(const std::string& secret_file,
                                                    const std::string& server_pub_file) {
  CurveClientKeys keys;
  if (secret_file.empty() && server_pub_file.empty()) return keys;
  if (secret_file.empty() || server_pub_file.empty()) {
    return absl::InvalidArgumentError("CURVE needs both --curve-key and --broker-key");
  }
  absl::StatusOr<std::string> secret = ReadZ85KeyFile(secret_file);
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::string> server = ReadZ85KeyFile(server_pub_file);
  if (!server.ok()) return server.status();
  absl::StatusOr<std::string> pub = CurvePublicKey(*secret);  // checks CURVE support early
  if (!pub.ok()) return pub.status();
  keys.secret_key = *secret;
  keys.server_key = *server;
  return keys;
}

absl::StatusOr<std::vector<std::string>> LoadAllowList(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read allow-list folder ", dir, ": ", ec.message()));
  std::vector<std::string> keys;
  for (const fs::directory_entry& e : it) {
    if (e.path().extension() != ".pub") continue;
    absl::StatusOr<std::string> z85 = ReadZ85KeyFile(e.path().string());
    if (!z85.ok()) return z85.status();
    keys.push_back(*DecodeZ85Key(*z85));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool IsLoopbackAddress(const std::string& addr) {
  if (absl::StartsWith(addr, "ipc://") || absl::StartsWith(addr, "inproc://")) return true;
  if (!absl::StartsWith(addr, "tcp://")) return false;
  std::string host = addr.substr(6);
  // A "source;dest" connect form never appears in a bind; treat it as not loopback.
  if (host.find(';') != std::string::npos) return false;
  if (absl::StartsWith(host, "[::1]:")) return true;
  size_t colon = host.rfind(':');
  if (colon == std::string::npos) return false;
  host = host.substr(0, colon);
  if (host == "localhost") return true;
  if (!absl::StartsWith(host, "127.")) return false;
  // 127.a.b.c only: digits and dots, so "127.evil.com" is not loopback.
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

}  // namespace hlox::proto
