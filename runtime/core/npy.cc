// NumPy .npy reading and writing (see core/npy.h).
#include "runtime/core/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlox::rt {
namespace {

// The NumPy descr (without byte-order char) for an element type; "" when none.
std::string DescrFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return "b1";
    case PrimitiveType::kS8: return "i1";
    case PrimitiveType::kS16: return "i2";
    case PrimitiveType::kS32: return "i4";
    case PrimitiveType::kS64: return "i8";
    case PrimitiveType::kU8: return "u1";
    case PrimitiveType::kU16: return "u2";
    case PrimitiveType::kU32: return "u4";
    case PrimitiveType::kU64: return "u8";
    case PrimitiveType::kF16: return "f2";
    case PrimitiveType::kBF16: return "u2";
    case PrimitiveType::kF32: return "f4";
    case PrimitiveType::kF64: return "f8";
    case PrimitiveType::kC64: return "c8";
    case PrimitiveType::kC128: return "c16";
    default: return "";
  }
}

// Value of `key` in the header dict text, up to the next top-level comma or brace.
absl::StatusOr<std::string> DictValue(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  if (k == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("header has no '", key, "'"));
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return absl::InvalidArgumentError("malformed header");
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t end = i;
  if (i < header.size() && header[i] == '(') {
    end = header.find(')', i);
    if (end == std::string::npos) return absl::InvalidArgumentError("malformed shape");
    return header.substr(i + 1, end - i - 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string v = header.substr(i, end - i);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  if (v.size() >= 2 && (v[0] == '\'' || v[0] == '"')) v = v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

absl::StatusOr<Value> ParseNpy(std::string_view bytes, const Shape& expected, const std::string& name) {
  auto fail = [&](const std::string& msg) { return absl::InvalidArgumentError(absl::StrCat(name, ": ", msg)); };
  if (!expected.IsArray()) return fail("expected shape is not an array");
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return fail("not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return fail(absl::StrCat("unsupported .npy version ", major));
  }
  if (offset + header_len > bytes.size()) return fail("truncated header");
  std::string header(bytes.substr(offset, header_len));
  auto descr = DictValue(header, "descr");
  auto fortran = DictValue(header, "fortran_order");
  auto shape_text = DictValue(header, "shape");
  if (!descr.ok() || !fortran.ok() || !shape_text.ok()) return fail(absl::StrCat("malformed header: ", header));
  if (*fortran != "False") return fail("fortran_order arrays are not supported (save with C order)");
  std::vector<int64_t> dims;
  std::stringstream ss(*shape_text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    char* end = nullptr;
    long long v = std::strtoll(item.c_str() + a, &end, 10);
    if (end == item.c_str() + a || v < 0) return fail(absl::StrCat("bad shape (", *shape_text, ")"));
    dims.push_back(v);
  }
  const std::string& d = *descr;
  if (d.size() < 2) return fail(absl::StrCat("bad descr '", d, "'"));
  char order = d[0];
  std::string code = d.substr(1);
  if (order == '>') return fail("big-endian arrays are not supported");
  PrimitiveType want = expected.element_type();
  std::string want_code = DescrFor(want);
  bool ok_type = code == want_code;
  if (want == PrimitiveType::kBF16 && code == "V2") ok_type = true;
  if (!ok_type) {
    return fail(absl::StrCat("dtype '", d, "' does not match parameter type ",
                             std::string(PrimitiveTypeName(want)), " (expected '<", want_code, "')"));
  }
  if (dims != expected.dims()) {
    return fail(absl::StrCat("shape (", absl::StrJoin(dims, ","), ") does not match parameter shape ",
                             expected.ToString(false)));
  }
  auto buf = std::make_shared<Buffer>(Shape(want, expected.dims()));
  size_t data_off = offset + header_len;
  if (bytes.size() - data_off < static_cast<size_t>(buf->byte_size())) {
    return fail(absl::StrCat("file holds ", bytes.size() - data_off, " data bytes, need ", buf->byte_size()));
  }
  if (buf->byte_size() > 0) std::memcpy(buf->data(), bytes.data() + data_off, buf->byte_size());
  return Value::Array(std::move(buf));
}

absl::StatusOr<Value> ReadNpy(const std::string& path, const Shape& expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseNpy(bytes, expected, path);
}

absl::StatusOr<std::string> EncodeNpy(const Buffer& buffer) {
  const Shape& s = buffer.shape();
  std::string code = DescrFor(s.element_type());
  if (code.empty()) {
    return absl::UnimplementedError(absl::StrCat("no .npy dtype for ", std::string(PrimitiveTypeName(s.element_type()))));
  }
  char order = (code == "b1" || code == "i1" || code == "u1") ? '|' : '<';
  std::string shape = s.rank() == 1 ? absl::StrCat("(", s.dim(0), ",)") : absl::StrCat("(", absl::StrJoin(s.dims(), ", "), ")");
  std::string header = absl::StrCat("{'descr': '", std::string(1, order), code, "', 'fortran_order': False, 'shape': ", shape, ", }");
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(buffer.data()), buffer.byte_size());
  return out;
}

absl::Status WriteNpy(const std::string& path, const Buffer& buffer) {
  auto bytes = EncodeNpy(buffer);
  if (!bytes.ok()) return bytes.status();
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  if (!out) return absl::InternalError(absl::StrCat("write failed: ", path));
  return absl::OkStatus();
}

}  // namespace hlox::rt
