// Parser for XLA HLO text as JAX, TensorFlow and PyTorch/XLA dump it. Errors are reported as
// "FILE:LINE:COL: error: message" followed by the source line and a caret.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hlox {

// Parses a whole module. `filename` is used only in error messages.
absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    std::string_view filename = "<input>");
// Reads and parses a file; a missing or unreadable file is a NotFound/InvalidArgument error.
absl::StatusOr<std::unique_ptr<Module>> ParseModuleFile(const std::string& path);
// Parses one shape, e.g. "f32[2,3]{1,0}" or "(s32[], pred[])".
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hlox
