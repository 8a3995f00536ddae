// Splitting a received message into command and body; see frames.h.
#include "protocol/frames.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace hlox::proto {

absl::StatusOr<Frames> SplitFrames(const Received& in) {
  if (in.frames.empty() || in.frames.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        kErrBadFrame, ": ", in.frames.size(), " frames (want a header and at most one body)"));
  }
  std::string_view header(static_cast<const char*>(in.frames[0].data()), in.frames[0].size());
  absl::StatusOr<Command> cmd = ParseHeader(header);
  if (!cmd.ok()) return cmd.status();
  Frames f{*cmd, {}};
  if (in.frames.size() == 2) {
    f.body = std::string_view(static_cast<const char*>(in.frames[1].data()), in.frames[1].size());
  }
  return f;
}

std::string FrameErrorCode(const absl::Status& s) {
  const std::string m(s.message());
  return m.substr(0, m.find(':'));
}

}  // namespace hlox::proto
