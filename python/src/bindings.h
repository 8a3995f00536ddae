// Shared helpers of the hlox Python extension (hlox._hlox): turning absl statuses into Python
// exceptions and the registration functions of each binding file.
#pragma once

#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hlox::py {

namespace pyb = pybind11;

// Modules cross into Python as shared pointers (the IR itself is not copyable).
using ModulePtr = std::shared_ptr<Module>;

// Raises ValueError carrying the status text ("INVALID_DECISIONS: ..." for bad decisions).
[[noreturn]] void ThrowStatus(const absl::Status& status);
inline void Check(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}
template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return std::move(*value);
}

// Each binding file registers its names on the extension module.
void BindIr(pyb::module_& m);        // Module, parse/load/print/verify
void BindPasses(pyb::module_& m);    // pipelines, decision points, features, pass ordering
void BindRuntime(pyb::module_& m);   // run on NumPy inputs, seeded inputs
void BindEval(pyb::module_& m);      // local evaluation, broker client, embedded fleet

}  // namespace hlox::py
