// Bounded reading of a worker's DONE message and its result RECORD without building msgpack
// objects: the broker routes and stores a result record as the bytes it received and needs only
// a few of its fields (status, and the cost's median, MAD and sample count for the spread
// statistics). The scan reads every byte once under explicit limits (each declared length or
// count is checked against the limits and the bytes left, nesting is capped at kMaxDepth, ext
// types are refused), checks the type of every known field as DecodeDone / DecodeRecord do,
// skips unknown keys, and allocates nothing, so hostile input costs at most one pass over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "cost/result.h"

namespace hlox::proto {

// A DONE body whose strings point into the scanned bytes.
struct DoneView {
  std::string_view job_id;
  uint32_t attempt = 0;
  bool crashed = false;
  std::string_view record;  // the RECORD bytes as sent (a msgpack bin)
};

// Accepts the bodies DecodeDone accepts, with the same error kinds (InvalidArgument for bad
// msgpack, trailing bytes, missing keys or wrong types; ResourceExhausted for limits).
absl::StatusOr<DoneView> ScanDone(std::string_view body);

// What the broker reads from a RECORD.
struct RecordSummary {
  JobStatus status = JobStatus::kRunError;
  double median = 0, mad = 0;  // cost.median, cost.mad (0 when absent)
  size_t samples = 0;          // entries of cost.samples
};

// Accepts the records DecodeRecord accepts (same rules per field; unknown keys are walked and
// skipped) and returns the summary; the same error kinds as ScanDone.
absl::StatusOr<RecordSummary> ScanRecord(std::string_view bytes);

}  // namespace hlox::proto
