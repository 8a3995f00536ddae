// Status propagation macros in the style of XLA's TF_RETURN_IF_ERROR / TF_ASSIGN_OR_RETURN.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOX_CONCAT_INNER(a, b) a##b
#define HLOX_CONCAT(a, b) HLOX_CONCAT_INNER(a, b)

#define HLOX_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::absl::Status _hlox_status = (expr);     \
    if (!_hlox_status.ok()) return _hlox_status; \
  } while (0)

#define HLOX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define HLOX_ASSIGN_OR_RETURN(lhs, expr) \
  HLOX_ASSIGN_OR_RETURN_IMPL(HLOX_CONCAT(_hlox_statusor_, __LINE__), lhs, expr)
