// The one rule by which broker, worker and client split a received message into its command and
// body (docs/PROTOCOL.md "Frames"): after the routing identity (ROUTER side) a message has one
// or two frames; the first is the 4-byte header checked by ParseHeader; the second, when present,
// is the body; a message of one frame has an empty body (what REREGISTER and DISCONNECT need;
// any other command then fails its body decoder). Anything else is refused.
#pragma once

#include "absl/status/statusor.h"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"

namespace hlox::proto {

// The command and body of `in` (the body views `in`'s frame, valid while `in` is). Errors:
// InvalidArgument with the message prefix "BAD_FRAME: " (no frames, more than two) or
// ParseHeader's ("BAD_FRAME", "BAD_VERSION", "UNKNOWN_COMMAND"); FrameErrorCode gives it.
absl::StatusOr<Frames> SplitFrames(const Received& in);

// The protocol error code (kErr*) at the start of a SplitFrames error message.
std::string FrameErrorCode(const absl::Status& s);

}  // namespace hlox::proto
