// The content address of a module: a stable 128-bit hash of its canonical printed text (without
// metadata, which never changes results), as 32 lowercase hex digits. The same module text gives
// the same hash on every machine and build; the service and the reference cache key on it.
#pragma once

#include <string>
#include <string_view>

#include "ir/module.h"

namespace hlox {

// 32 hex digits hashing `text` (two independent 64-bit lanes).
std::string HashText(std::string_view text);
// HashText of PrintModule(module) with metadata left out.
std::string ModuleHash(const Module& module);

}  // namespace hlox
