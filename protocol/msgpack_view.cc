// Bounded msgpack unpacking and typed map access; see msgpack_view.h.
#include "protocol/msgpack_view.h"

#include <cstring>
#include <exception>

#include "absl/strings/str_cat.h"
#include "protocol/protocol.h"

namespace hlox::proto {
namespace {

absl::Status Missing(std::string_view key) {
  return absl::InvalidArgumentError(absl::StrCat("missing key '", std::string(key), "'"));
}
absl::Status WrongType(std::string_view key, const char* want) {
  return absl::InvalidArgumentError(
      absl::StrCat("key '", std::string(key), "' is not ", want));
}

}  // namespace

namespace {
// This thread's reusable zone, and whether an open scope holds it.
struct ThreadZone {
  msgpack::zone zone;
  bool taken = false;
};
ThreadZone& ThisThreadZone() {
  thread_local ThreadZone z;
  return z;
}
// Strings, bins and exts are referenced in the input rather than copied into the zone.
bool ReferenceAll(msgpack::type::object_type, size_t, void*) { return true; }
}  // namespace

UnpackScope::UnpackScope() {
  ThreadZone& t = ThisThreadZone();
  if (!t.taken) {
    t.taken = true;
    zone_ = &t.zone;
  } else {
    own_ = std::make_unique<msgpack::zone>();
    zone_ = own_.get();
  }
}

UnpackScope::~UnpackScope() {
  if (own_) return;
  zone_->clear();  // keeps the first chunk for the next message, frees any larger ones
  ThisThreadZone().taken = false;
}

absl::StatusOr<const msgpack::object*> UnpackScope::Unpack(std::string_view bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError("empty body");
  if (bytes.size() > kMaxMessageBytes) return absl::ResourceExhaustedError("body too large");
  // Containers are capped well below what the frame could hold; strings/bins by the frame.
  msgpack::unpack_limit limit(/*array=*/kMaxSamples, /*map=*/kMaxInvocations + 64,
                              /*str=*/kMaxModuleBytes, /*bin=*/kMaxModuleBytes, /*ext=*/0,
                              /*depth=*/kMaxDepth);
  size_t off = 0;
  try {
    root_ = msgpack::unpack(*zone_, bytes.data(), bytes.size(), off, ReferenceAll, nullptr, limit);
  } catch (const msgpack::size_overflow& e) {
    return absl::ResourceExhaustedError(absl::StrCat("msgpack limit: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad msgpack: ", e.what()));
  }
  if (off != bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trailing bytes: ", bytes.size() - off, " after the message"));
  }
  return &root_;
}

absl::StatusOr<MapView> MapView::Of(const msgpack::object& o) {
  if (o.type != msgpack::type::MAP) return absl::InvalidArgumentError("body is not a map");
  return MapView(&o.via.map);
}

const msgpack::object* MapView::Find(std::string_view key) const {
  for (uint32_t i = 0; i < map_->size; ++i) {
    const msgpack::object& k = map_->ptr[i].key;
    if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == key) {
      const msgpack::object& v = map_->ptr[i].val;
      return v.type == msgpack::type::NIL ? nullptr : &v;
    }
  }
  return nullptr;
}

absl::StatusOr<std::string> MapView::OptStr(std::string_view key, size_t max,
                                            std::string def) const {
  const msgpack::object* v = Find(key);
  if (!v) return def;
  if (v->type != msgpack::type::STR && v->type != msgpack::type::BIN) {
    return WrongType(key, "a string");
  }
  size_t n = v->type == msgpack::type::STR ? v->via.str.size : v->via.bin.size;
  const char* p = v->type == msgpack::type::STR ? v->via.str.ptr : v->via.bin.ptr;
  if (n > max) {
    return absl::ResourceExhaustedError(absl::StrCat("key '", std::string(key), "' longer than ", max));
  }
  return std::string(p, n);
}

absl::StatusOr<std::string> MapView::Str(std::string_view key, size_t max) const {
  if (!Find(key)) return Missing(key);
  return OptStr(key, max);
}

absl::StatusOr<uint64_t> MapView::OptU64(std::string_view key, uint64_t def) const {
  const msgpack::object* v = Find(key);
  if (!v) return def;
  if (v->type != msgpack::type::POSITIVE_INTEGER) return WrongType(key, "an unsigned integer");
  return v->via.u64;
}

absl::StatusOr<uint64_t> MapView::U64(std::string_view key) const {
  if (!Find(key)) return Missing(key);
  return OptU64(key, 0);
}

absl::StatusOr<bool> MapView::OptBool(std::string_view key, bool def) const {
  const msgpack::object* v = Find(key);
  if (!v) return def;
  if (v->type != msgpack::type::BOOLEAN) return WrongType(key, "a bool");
  return v->via.boolean;
}

absl::StatusOr<bool> MapView::Bool(std::string_view key) const {
  if (!Find(key)) return Missing(key);
  return OptBool(key, false);
}

absl::StatusOr<double> MapView::OptF64(std::string_view key, double def) const {
  const msgpack::object* v = Find(key);
  if (!v) return def;
  switch (v->type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return v->via.f64;
    case msgpack::type::POSITIVE_INTEGER: return static_cast<double>(v->via.u64);
    case msgpack::type::NEGATIVE_INTEGER: return static_cast<double>(v->via.i64);
    default: return WrongType(key, "a number");
  }
}

absl::StatusOr<double> MapView::F64(std::string_view key) const {
  if (!Find(key)) return Missing(key);
  return OptF64(key, 0);
}

absl::StatusOr<MapView> MapView::Map(std::string_view key) const {
  const msgpack::object* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != msgpack::type::MAP) return WrongType(key, "a map");
  return MapView(&v->via.map);
}

absl::StatusOr<PipelineDecisions> MapView::OptDecisions(std::string_view key) const {
  PipelineDecisions out;
  const msgpack::object* v = Find(key);
  if (!v) return out;
  if (v->type != msgpack::type::MAP) return WrongType(key, "a map of str -> bin");
  const msgpack::object_map& m = v->via.map;
  if (m.size > kMaxInvocations) return absl::ResourceExhaustedError("too many invocations");
  size_t total = 0;
  for (uint32_t i = 0; i < m.size; ++i) {
    const msgpack::object& k = m.ptr[i].key;
    const msgpack::object& b = m.ptr[i].val;
    if (k.type != msgpack::type::STR || k.via.str.size == 0 || k.via.str.size > kMaxNameBytes) {
      return absl::InvalidArgumentError("decision key is not a short non-empty string");
    }
    if (b.type != msgpack::type::BIN) return absl::InvalidArgumentError("decisions are not a bin");
    if (b.via.bin.size % 4 != 0) {
      return absl::InvalidArgumentError("decision bin length is not a multiple of 4");
    }
    size_t n = b.via.bin.size / 4;
    total += n;
    if (total > kMaxDecisions) return absl::ResourceExhaustedError("too many decisions");
    DecisionVector dv(n);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(b.via.bin.ptr);
    for (size_t j = 0; j < n; ++j) {
      uint32_t u = uint32_t(p[4 * j]) | uint32_t(p[4 * j + 1]) << 8 | uint32_t(p[4 * j + 2]) << 16 |
                   uint32_t(p[4 * j + 3]) << 24;
      dv[j] = static_cast<int32_t>(u);
    }
    std::string name(k.via.str.ptr, k.via.str.size);
    if (!out.emplace(std::move(name), std::move(dv)).second) {
      return absl::InvalidArgumentError("duplicate decision key");
    }
  }
  return out;
}

void PackStr(WirePacker& pk, std::string_view s) {
  pk.pack_str(static_cast<uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

void PackBin(WirePacker& pk, std::string_view s) {
  pk.pack_bin(static_cast<uint32_t>(s.size()));
  pk.pack_bin_body(s.data(), static_cast<uint32_t>(s.size()));
}

void PackDecisions(WirePacker& pk, const PipelineDecisions& d) {
  pk.pack_map(static_cast<uint32_t>(d.size()));
  std::string buf;
  for (const auto& [key, dv] : d) {
    PackStr(pk, key);
    buf.resize(dv.size() * 4);
    for (size_t j = 0; j < dv.size(); ++j) {
      uint32_t u = static_cast<uint32_t>(dv[j]);
      buf[4 * j] = char(u & 0xff);
      buf[4 * j + 1] = char((u >> 8) & 0xff);
      buf[4 * j + 2] = char((u >> 16) & 0xff);
      buf[4 * j + 3] = char((u >> 24) & 0xff);
    }
    PackBin(pk, buf);
  }
}

}  // namespace hlox::proto
