// How the broker reads a worker's DONE: the job fields of the message and a summary of its
// result record (status, cost spread). The broker's own reader is the bounded scan of
// protocol/record_scan.h; the interface exists so a benchmark can put another reading (such as
// a full decode) in the same place and measure the broker with it.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/record_scan.h"

namespace hlox::broker {

class DoneReader {
 public:
  virtual ~DoneReader() = default;
  // The job fields of a DONE body. The views point into `body` or into this reader, and stay
  // valid until the next call. Errors as proto::ScanDone's.
  virtual absl::StatusOr<proto::DoneView> ReadDone(std::string_view body) = 0;
  // The summary of a result record; errors as proto::ScanRecord's.
  virtual absl::StatusOr<proto::RecordSummary> Summarize(std::string_view record) = 0;
};

// The broker's reader: proto::ScanDone and proto::ScanRecord (nothing is copied or allocated).
class ScanDoneReader final : public DoneReader {
 public:
  absl::StatusOr<proto::DoneView> ReadDone(std::string_view body) override {
    return proto::ScanDone(body);
  }
  absl::StatusOr<proto::RecordSummary> Summarize(std::string_view record) override {
    return proto::ScanRecord(record);
  }
};

}  // namespace hlox::broker
