// NumPy .npy files for `hlox run --inputs/--save-outputs`: little-endian, C order, format
// versions 1.0, 2.0 and 3.0. dtypes: bool (pred), i1..i8 (s8..s64), u1..u8 (u8..u64), f2 (f16),
// f4, f8, c8 (c64), c16 (c128). bf16 has no NumPy dtype: hlox WRITES bf16 as '<u2' holding the
// raw bfloat16 bits (view them with ml_dtypes.bfloat16, or widen: (x.astype('<u4') << 16)
// .view('<f4')), and READS '<u2', '<V2' or '|V2' into a bf16 parameter.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/core/value.h"

namespace hlox::rt {

// Parses .npy bytes into an array of `expected`'s element type and dims (the file must match;
// errors name `name` and say what differs). `expected` must be an array shape.
absl::StatusOr<Value> ParseNpy(std::string_view bytes, const Shape& expected, const std::string& name);
// Reads and parses a .npy file (see ParseNpy).
absl::StatusOr<Value> ReadNpy(const std::string& path, const Shape& expected);
// The .npy encoding (version 1.0) of an array buffer.
absl::StatusOr<std::string> EncodeNpy(const Buffer& buffer);
// Writes EncodeNpy(buffer) to `path`.
absl::Status WriteNpy(const std::string& path, const Buffer& buffer);

}  // namespace hlox::rt
