// Bounded msgpack decoding for the wire protocol: unpack with explicit limits (so a few hostile
// bytes cannot ask for gigabytes), refuse trailing bytes, and read a map's fields with type and
// size checks that return statuses instead of throwing. Internal to broker/, worker/ and agent/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/decisions.h"
#include "msgpack.hpp"

namespace hlox::proto {

// One message unpacked for reading. Unpack() reads exactly one object from `bytes` with the
// protocol limits; trailing bytes, bad msgpack or exceeded limits are errors (ResourceExhausted
// for limits). The objects live in a zone this thread reuses from message to message (a scope
// opened while another is open on the thread gets a zone of its own), and strings and bins
// refer into `bytes` instead of being copied: `bytes` must outlive the scope, and what is read
// is copied out before it ends. This keeps the broker's per-message decode free of the
// allocate-and-free of a fresh 8 KiB zone (and of copies of module texts).
class UnpackScope {
 public:
  UnpackScope();
  ~UnpackScope();
  UnpackScope(const UnpackScope&) = delete;
  UnpackScope& operator=(const UnpackScope&) = delete;

  // The root object; valid until the scope ends. Call once per scope.
  absl::StatusOr<const msgpack::object*> Unpack(std::string_view bytes);

 private:
  msgpack::zone* zone_;
  std::unique_ptr<msgpack::zone> own_;  // set when the thread's zone was taken
  msgpack::object root_;
};

// Read access to a msgpack map by string key. The object must outlive the view.
class MapView {
 public:
  // InvalidArgument unless `o` is a map.
  static absl::StatusOr<MapView> Of(const msgpack::object& o);
  // The value under `key`, or nullptr.
  const msgpack::object* Find(std::string_view key) const;

  // Required fields: missing key or wrong type is InvalidArgument, too long ResourceExhausted.
  absl::StatusOr<std::string> Str(std::string_view key, size_t max) const;
  absl::StatusOr<uint64_t> U64(std::string_view key) const;
  absl::StatusOr<bool> Bool(std::string_view key) const;
  absl::StatusOr<double> F64(std::string_view key) const;
  absl::StatusOr<MapView> Map(std::string_view key) const;
  // Optional fields: `def` when the key is absent (or nil); a present value of the wrong type is
  // still an error.
  absl::StatusOr<std::string> OptStr(std::string_view key, size_t max, std::string def = "") const;
  absl::StatusOr<uint64_t> OptU64(std::string_view key, uint64_t def) const;
  absl::StatusOr<bool> OptBool(std::string_view key, bool def) const;
  absl::StatusOr<double> OptF64(std::string_view key, double def) const;
  // Decisions: a map of str -> bin (little-endian int32; length must be a multiple of 4).
  absl::StatusOr<PipelineDecisions> OptDecisions(std::string_view key) const;

 private:
  explicit MapView(const msgpack::object_map* m) : map_(m) {}
  const msgpack::object_map* map_;
};

// The bytes of one message being packed: a string the packer appends to, handed over without a
// copy. Messages start with room for 256 bytes (most control messages fit), not the 8 KiB that a
// msgpack::sbuffer allocates and frees for each one.
struct WireSink {
  std::string bytes;
  WireSink() { bytes.reserve(256); }
  void write(const char* p, size_t n) { bytes.append(p, n); }
};
using WirePacker = msgpack::packer<WireSink>;

// Packs decisions as a map of str -> bin of little-endian int32.
void PackDecisions(WirePacker& pk, const PipelineDecisions& d);
// Packs `s` as a msgpack str / bin.
void PackStr(WirePacker& pk, std::string_view s);
void PackBin(WirePacker& pk, std::string_view s);

}  // namespace hlox::proto
