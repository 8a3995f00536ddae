// CURVE key material for hlox sockets: Z85 key files written by `hlox keygen`, the client key
// set a worker or agent needs (its own secret key and the broker's public key), the broker's
// allow-list of public keys, and the rule that says which bind addresses are loopback-only.
// Plain strings only, so headers such as client/client.h can carry keys without libzmq.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlox::proto {

// A CURVE client's keys, Z85 text (40 characters each). Empty secret_key = CURVE off.
struct CurveClientKeys {
  std::string secret_key;   // this client's secret key (its public key is derived)
  std::string server_key;   // the broker's public key
  bool enabled() const { return !secret_key.empty(); }
};

// Reads a Z85 key file (first 40 non-space characters); InvalidArgument if it is not a key.
absl::StatusOr<std::string> ReadZ85KeyFile(const std::string& path);
// The Z85 public key for a Z85 secret key.
absl::StatusOr<std::string> CurvePublicKey(const std::string& secret_z85);
// The 32-byte binary form of a Z85 key.
absl::StatusOr<std::string> DecodeZ85Key(const std::string& z85);
// Loads a client's key set from its secret key file and the broker's .pub file. Both empty =
// CURVE off; exactly one given is an error.
absl::StatusOr<CurveClientKeys> LoadCurveClientKeys(const std::string& secret_file,
                                                    const std::string& server_pub_file);
// Binary (32-byte) public keys of every *.pub file in `dir`; an error for an unreadable dir or
// a malformed key file, so a typo never silently admits nobody or everybody.
absl::StatusOr<std::vector<std::string>> LoadAllowList(const std::string& dir);
// True for addresses only this machine can reach: tcp://127.x, tcp://localhost, tcp://[::1],
// ipc://, inproc://.
bool IsLoopbackAddress(const std::string& addr);

}  // namespace hlox::proto
