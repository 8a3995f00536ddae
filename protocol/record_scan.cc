// Allocation-free bounded scan of DONE bodies and result records; see record_scan.h. A Reader
// decodes one msgpack header at a time (scalars and str/bin payloads whole, containers as a
// count); ScanMap walks a map against a small table of expected fields.
#include "protocol/record_scan.h"

#include <cstring>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "protocol/protocol.h"

namespace hlox::proto {
namespace {

enum class Kind : uint8_t { kNil, kBool, kUint, kInt, kFloat, kStr, kBin, kArray, kMap };

struct Value {
  Kind kind = Kind::kNil;
  bool b = false;
  uint64_t u = 0;    // kUint
  int64_t i = 0;     // kInt (negative values only, as msgpack-c types them)
  double f = 0;      // kFloat
  std::string_view bytes;  // kStr, kBin
  uint32_t count = 0;      // kArray (elements), kMap (pairs)
};

absl::Status Truncated() { return absl::InvalidArgumentError("bad msgpack: truncated"); }

class Reader {
 public:
  explicit Reader(std::string_view b)
      : p_(reinterpret_cast<const uint8_t*>(b.data())), end_(p_ + b.size()) {}
  size_t left() const { return static_cast<size_t>(end_ - p_); }

  // Reads the next value's header (and a scalar's or str/bin's payload).
  absl::Status Next(Value* v) {
    if (p_ == end_) return Truncated();
    const uint8_t c = *p_++;
    if (c <= 0x7f) return Uint(v, c);
    if (c >= 0xe0) return Int(v, static_cast<int8_t>(c));
    if (c <= 0x8f) return Container(v, Kind::kMap, c & 0x0f);
    if (c <= 0x9f) return Container(v, Kind::kArray, c & 0x0f);
    if (c <= 0xbf) return Bytes(v, Kind::kStr, c & 0x1f);
    uint64_t n = 0;
    switch (c) {
      case 0xc0: v->kind = Kind::kNil; return absl::OkStatus();
      case 0xc2: case 0xc3: v->kind = Kind::kBool; v->b = c == 0xc3; return absl::OkStatus();
      case 0xc4: case 0xc5: case 0xc6:
        HLOX_RETURN_IF_ERROR(Be(size_t{1} << (c - 0xc4), &n));
        return Bytes(v, Kind::kBin, n);
      case 0xca: {
        HLOX_RETURN_IF_ERROR(Be(4, &n));
        uint32_t bits = static_cast<uint32_t>(n);
        float x;
        std::memcpy(&x, &bits, 4);
        v->kind = Kind::kFloat;
        v->f = x;
        return absl::OkStatus();
      }
      case 0xcb: {
        HLOX_RETURN_IF_ERROR(Be(8, &n));
        v->kind = Kind::kFloat;
        std::memcpy(&v->f, &n, 8);
        return absl::OkStatus();
      }
      case 0xcc: case 0xcd: case 0xce: case 0xcf:
        HLOX_RETURN_IF_ERROR(Be(size_t{1} << (c - 0xcc), &n));
        return Uint(v, n);
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const size_t w = size_t{1} << (c - 0xd0);
        HLOX_RETURN_IF_ERROR(Be(w, &n));
        if (w < 8 && (n >> (8 * w - 1)) & 1) n |= ~uint64_t{0} << (8 * w);  // sign-extend
        return Int(v, static_cast<int64_t>(n));
      }
      case 0xd9: case 0xda: case 0xdb:
        HLOX_RETURN_IF_ERROR(Be(size_t{1} << (c - 0xd9), &n));
        return Bytes(v, Kind::kStr, n);
      case 0xdc: case 0xdd:
        HLOX_RETURN_IF_ERROR(Be(c == 0xdc ? 2 : 4, &n));
        return Container(v, Kind::kArray, n);
      case 0xde: case 0xdf:
        HLOX_RETURN_IF_ERROR(Be(c == 0xde ? 2 : 4, &n));
        return Container(v, Kind::kMap, n);
      case 0xc7: case 0xc8: case 0xc9: case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return absl::ResourceExhaustedError("msgpack limit: ext types are not accepted");
      default:
        return absl::InvalidArgumentError("bad msgpack: reserved byte 0xc1");
    }
  }

  // Skips what follows `v` (a container's elements); `depth` is v's nesting level (top = 1).
  absl::Status Skip(const Value& v, int depth) {
    if (v.kind != Kind::kArray && v.kind != Kind::kMap) return absl::OkStatus();
    if (depth > kMaxDepth) return absl::ResourceExhaustedError("msgpack limit: nesting too deep");
    const uint64_t n = v.kind == Kind::kMap ? 2 * uint64_t{v.count} : v.count;
    for (uint64_t k = 0; k < n; ++k) {
      Value e;
      HLOX_RETURN_IF_ERROR(Next(&e));
      HLOX_RETURN_IF_ERROR(Skip(e, depth + 1));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Be(size_t width, uint64_t* out) {
    if (left() < width) return Truncated();
    uint64_t x = 0;
    for (size_t k = 0; k < width; ++k) x = x << 8 | p_[k];
    p_ += width;
    *out = x;
    return absl::OkStatus();
  }
  static absl::Status Uint(Value* v, uint64_t x) {
    v->kind = Kind::kUint;
    v->u = x;
    return absl::OkStatus();
  }
  static absl::Status Int(Value* v, int64_t x) {
    if (x >= 0) return Uint(v, static_cast<uint64_t>(x));  // msgpack-c: POSITIVE_INTEGER
    v->kind = Kind::kInt;
    v->i = x;
    return absl::OkStatus();
  }
  absl::Status Bytes(Value* v, Kind k, uint64_t n) {
    if (n > kMaxModuleBytes) return absl::ResourceExhaustedError("msgpack limit: str/bin too long");
    if (n > left()) return Truncated();
    v->kind = k;
    v->bytes = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return absl::OkStatus();
  }
  absl::Status Container(Value* v, Kind k, uint64_t n) {
    const uint64_t limit = k == Kind::kMap ? kMaxInvocations + 64 : kMaxSamples;
    if (n > limit) return absl::ResourceExhaustedError("msgpack limit: container too large");
    // Every element takes at least one byte: a count beyond the bytes left is a lie.
    if ((k == Kind::kMap ? 2 * n : n) > left()) return Truncated();
    v->kind = k;
    v->count = static_cast<uint32_t>(n);
    return absl::OkStatus();
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

// What a known key's value must be (the rules of MapView's accessors).
enum class Want : uint8_t { kStr, kNum, kInt, kU32, kBool, kSamples, kMap };

struct Field {
  std::string_view name;
  Want want;
  bool required = false;
  size_t max = 0;                  // kStr: longest accepted
  const Field* sub = nullptr;      // kMap: its fields
  size_t nsub = 0;
};

// Values taken from the scan (by field name at the place the caller asks for them).
struct Taken {
  std::string_view str[2];  // ScanDone: id, record; ScanRecord: status
  double num[2] = {0, 0};   // ScanRecord: median, mad
  uint64_t u = 0;           // ScanDone: attempt; ScanRecord: samples
  bool b = false;           // ScanDone: crashed
};

absl::Status WrongType(std::string_view key, const char* want) {
  return absl::InvalidArgumentError(absl::StrCat("key '", std::string(key), "' is not ", want));
}

using Sink = void (*)(std::string_view key, const Value& v, Taken* t);

// Walks the `count` pairs of a map at nesting level `depth` against `fields`. Like
// MapView::Find, only the first pair with a key counts and nil reads as absent.
absl::Status ScanMap(Reader& r, uint32_t count, int depth, const Field* fields, size_t n,
                     Sink sink, Taken* t) {
  if (depth > kMaxDepth) return absl::ResourceExhaustedError("msgpack limit: nesting too deep");
  uint32_t seen = 0, present = 0;
  for (uint32_t k = 0; k < count; ++k) {
    Value key, v;
    HLOX_RETURN_IF_ERROR(r.Next(&key));
    HLOX_RETURN_IF_ERROR(r.Skip(key, depth + 1));
    HLOX_RETURN_IF_ERROR(r.Next(&v));
    size_t f = n;
    if (key.kind == Kind::kStr) {
      for (f = 0; f < n && fields[f].name != key.bytes; ++f) {}
    }
    if (f == n || (seen >> f & 1)) {
      HLOX_RETURN_IF_ERROR(r.Skip(v, depth + 1));
      continue;
    }
    seen |= 1u << f;
    if (v.kind == Kind::kNil) continue;
    present |= 1u << f;
    const Field& fd = fields[f];
    switch (fd.want) {
      case Want::kStr:
        if (v.kind != Kind::kStr && v.kind != Kind::kBin) return WrongType(fd.name, "a string");
        if (v.bytes.size() > fd.max) {
          return absl::ResourceExhaustedError(
              absl::StrCat("key '", std::string(fd.name), "' longer than ", fd.max));
        }
        break;
      case Want::kNum:
        if (v.kind != Kind::kUint && v.kind != Kind::kInt && v.kind != Kind::kFloat) {
          return WrongType(fd.name, "a number");
        }
        if (v.kind == Kind::kUint) v.f = static_cast<double>(v.u);
        if (v.kind == Kind::kInt) v.f = static_cast<double>(v.i);
        break;
      case Want::kInt:
        if (v.kind != Kind::kUint && v.kind != Kind::kInt) return WrongType(fd.name, "an integer");
        break;
      case Want::kU32:
        if (v.kind != Kind::kUint) return WrongType(fd.name, "an unsigned integer");
        if (v.u > 0xffffffffu) {
          return absl::InvalidArgumentError(
              absl::StrCat("key '", std::string(fd.name), "' too large"));
        }
        break;
      case Want::kBool:
        if (v.kind != Kind::kBool) return WrongType(fd.name, "a bool");
        break;
      case Want::kSamples:
        if (v.kind != Kind::kArray) {
          return absl::InvalidArgumentError(
              absl::StrCat("key '", std::string(fd.name), "' not an array"));
        }
        if (depth + 1 > kMaxDepth) {
          return absl::ResourceExhaustedError("msgpack limit: nesting too deep");
        }
        for (uint32_t e = 0; e < v.count; ++e) {
          Value x;
          HLOX_RETURN_IF_ERROR(r.Next(&x));
          if (x.kind != Kind::kFloat) {
            return absl::InvalidArgumentError(
                absl::StrCat("an entry of '", std::string(fd.name), "' is not a float"));
          }
        }
        break;
      case Want::kMap:
        if (v.kind != Kind::kMap) return WrongType(fd.name, "a map");
        HLOX_RETURN_IF_ERROR(ScanMap(r, v.count, depth + 1, fd.sub, fd.nsub, sink, t));
        break;
    }
    sink(fd.name, v, t);
  }
  for (size_t f = 0; f < n; ++f) {
    if (fields[f].required && !(present >> f & 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing key '", std::string(fields[f].name), "'"));
    }
  }
  return absl::OkStatus();
}

// Scans `bytes` as one top-level map against `fields`; trailing bytes are an error.
absl::Status ScanTop(std::string_view bytes, const Field* fields, size_t n, Sink sink,
                     Taken* t) {
  if (bytes.empty()) return absl::InvalidArgumentError("empty body");
  if (bytes.size() > kMaxMessageBytes) return absl::ResourceExhaustedError("body too large");
  Reader r(bytes);
  Value top;
  HLOX_RETURN_IF_ERROR(r.Next(&top));
  if (top.kind != Kind::kMap) {
    HLOX_RETURN_IF_ERROR(r.Skip(top, 1));
    if (r.left()) return absl::InvalidArgumentError("trailing bytes after the message");
    return absl::InvalidArgumentError("body is not a map");
  }
  HLOX_RETURN_IF_ERROR(ScanMap(r, top.count, 1, fields, n, sink, t));
  if (r.left()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trailing bytes: ", r.left(), " after the message"));
  }
  return absl::OkStatus();
}

constexpr Field kDoneFields[] = {
    {"id", Want::kStr, true, kMaxNameBytes},
    {"attempt", Want::kU32, true},
    {"crashed", Want::kBool, true},
    {"record", Want::kStr, true, kMaxMessageBytes},
};

constexpr Field kCostFields[] = {
    {"median", Want::kNum}, {"mad", Want::kNum}, {"ci_low", Want::kNum},
    {"ci_high", Want::kNum}, {"mean", Want::kNum}, {"min", Want::kNum},
    {"calls_per_sample", Want::kInt}, {"disturbed", Want::kInt}, {"unstable", Want::kBool},
    {"samples", Want::kSamples},
    {"steal_seconds", Want::kNum}, {"run_wait_seconds", Want::kNum},
    {"sampled_seconds", Want::kNum}, {"reference", Want::kStr, false, kMaxNameBytes},
    {"reference_quiet_compute", Want::kNum}, {"reference_quiet_memory", Want::kNum},
    {"reference_slowdown", Want::kNum}, {"normalized_median", Want::kNum},
    {"normalized_mad", Want::kNum}, {"normalized_ci_low", Want::kNum},
    {"normalized_ci_high", Want::kNum}, {"reference_compute", Want::kSamples},
    {"reference_memory", Want::kSamples},
};
constexpr Field kAnalyticalFields[] = {
    {"op_count", Want::kInt}, {"flops", Want::kNum}, {"bytes_moved", Want::kNum},
    {"roofline_seconds", Want::kNum}, {"scratchpad_bytes", Want::kInt},
    {"scratchpad_traffic_bytes", Want::kNum}, {"scratchpad_seconds", Want::kNum},
    {"peak_memory_bytes", Want::kInt},
};
constexpr Field kProvenanceFields[] = {
    {"host", Want::kStr, false, kMaxNameBytes}, {"cpu", Want::kStr, false, kMaxNameBytes},
    {"isa", Want::kStr, false, kMaxNameBytes},
    {"cores", Want::kInt}, {"threads", Want::kInt},
    {"hlox_version", Want::kStr, false, kMaxNameBytes},
    {"build_id", Want::kStr, false, kMaxNameBytes},
    {"worker_id", Want::kStr, false, kMaxNameBytes},
    {"hardware_class", Want::kStr, false, kMaxNameBytes},
    {"protocol", Want::kStr, false, kMaxTextBytes}, {"seed", Want::kInt},
};
constexpr Field kMismatchFields[] = {
    {"output", Want::kInt}, {"index", Want::kInt}, {"expected", Want::kNum},
    {"actual", Want::kNum}, {"detail", Want::kStr, false, kMaxTextBytes},
};
// A paired job's figures ("median", "mad" and "samples" are not among them: the sink takes
// those names from the cost map only).
constexpr Field kPairedFields[] = {
    {"ratio", Want::kNum}, {"ci_low", Want::kNum}, {"ci_high", Want::kNum},
    {"unstable", Want::kBool}, {"instance_count", Want::kInt}, {"calls_per_sample", Want::kInt},
    {"rounds", Want::kInt}, {"ratios", Want::kSamples}, {"baseline_median", Want::kNum},
    {"candidate_median", Want::kNum},
};
constexpr Field kRecordFields[] = {
    {"status", Want::kStr, true, kMaxNameBytes},
    {"message", Want::kStr, false, kMaxTextBytes},
    {"module_hash", Want::kStr, false, kMaxNameBytes},
    {"text_hash", Want::kStr, false, kMaxNameBytes},
    {"pipeline", Want::kStr, false, kMaxPipelineBytes},
    {"cost", Want::kMap, true, 0, kCostFields, std::size(kCostFields)},
    {"analytical", Want::kMap, true, 0, kAnalyticalFields, std::size(kAnalyticalFields)},
    {"provenance", Want::kMap, true, 0, kProvenanceFields, std::size(kProvenanceFields)},
    {"mismatch", Want::kMap, false, 0, kMismatchFields, std::size(kMismatchFields)},
    {"instruction_count", Want::kInt},
    {"eval_seconds", Want::kNum},
    {"sites", Want::kStr, false, kMaxSitesBytes},
    {"paired", Want::kMap, false, 0, kPairedFields, std::size(kPairedFields)},
};

}  // namespace

absl::StatusOr<DoneView> ScanDone(std::string_view body) {
  Taken t;
  HLOX_RETURN_IF_ERROR(ScanTop(body, kDoneFields, std::size(kDoneFields),
                               [](std::string_view key, const Value& v, Taken* t) {
                                 if (key == "id") t->str[0] = v.bytes;
                                 else if (key == "record") t->str[1] = v.bytes;
                                 else if (key == "attempt") t->u = v.u;
                                 else t->b = v.b;
                               }, &t));
  return DoneView{t.str[0], static_cast<uint32_t>(t.u), t.b, t.str[1]};
}

absl::StatusOr<RecordSummary> ScanRecord(std::string_view bytes) {
  // Only these keys are taken; a nested map's keys never collide with them except "median",
  // "mad" and "samples", which exist only in cost.
  Taken t;
  HLOX_RETURN_IF_ERROR(ScanTop(bytes, kRecordFields, std::size(kRecordFields),
                               [](std::string_view key, const Value& v, Taken* t) {
                                 if (key == "status") t->str[0] = v.bytes;
                                 else if (key == "median") t->num[0] = v.f;
                                 else if (key == "mad") t->num[1] = v.f;
                                 else if (key == "samples") t->u = v.count;
                               }, &t));
  std::optional<JobStatus> st = ParseStatusWireName(t.str[0]);
  if (!st) {
    return absl::InvalidArgumentError(absl::StrCat("unknown status '", std::string(t.str[0]), "'"));
  }
  RecordSummary s;
  s.status = *st;
  s.median = t.num[0];
  s.mad = t.num[1];
  s.samples = t.u;
  return s;
}

}  // namespace hlox::proto
