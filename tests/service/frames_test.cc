// proto::SplitFrames, the one framing rule of broker, worker and client: one or two frames after
// the identity, a checked header, an optional body; every other shape refused with its code.
#include "protocol/frames.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hlox::proto {
namespace {

Received Msg(const std::vector<std::string>& frames) {
  Received in;
  in.identity = "peer";
  for (const std::string& f : frames) in.frames.emplace_back(f.data(), f.size());
  return in;
}

std::string CodeOf(const Received& in) {
  absl::StatusOr<Frames> f = SplitFrames(in);
  return f.ok() ? "OK" : FrameErrorCode(f.status());
}

TEST(SplitFrames, HeaderAndBody) {
  Received in = Msg({MakeHeader(Command::kSubmit), "body"});
  absl::StatusOr<Frames> f = SplitFrames(in);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->command, Command::kSubmit);
  EXPECT_EQ(f->body, "body");
  EXPECT_EQ(f->body.data(), in.frames[1].data());  // a view, not a copy
}

TEST(SplitFrames, OneFrameHasAnEmptyBody) {
  absl::StatusOr<Frames> f = SplitFrames(Msg({MakeHeader(Command::kDisconnect)}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->command, Command::kDisconnect);
  EXPECT_TRUE(f->body.empty());
  // An empty second frame is the same message.
  f = SplitFrames(Msg({MakeHeader(Command::kReregister), ""}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->body.empty());
}

TEST(SplitFrames, RefusesOtherFrameCounts) {
  EXPECT_EQ(CodeOf(Msg({})), kErrBadFrame);
  EXPECT_EQ(CodeOf(Msg({MakeHeader(Command::kSubmit), "a", "b"})), kErrBadFrame);
  absl::StatusOr<Frames> f = SplitFrames(Msg({MakeHeader(Command::kSubmit), "a", "b"}));
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(f.status().message()).find("3 frames"), std::string::npos);
}

TEST(SplitFrames, RefusesBadHeaders) {
  EXPECT_EQ(CodeOf(Msg({"HX", "x"})), kErrBadFrame);
  EXPECT_EQ(CodeOf(Msg({"XXXX", "x"})), kErrBadFrame);
  EXPECT_EQ(CodeOf(Msg({std::string("HX\x02S", 4), "x"})), kErrBadVersion);
  EXPECT_EQ(CodeOf(Msg({std::string("HX\x01?", 4), "x"})), kErrUnknownCommand);
  EXPECT_EQ(CodeOf(Msg({"body only"})), kErrBadFrame);
}

}  // namespace
}  // namespace hlox::proto
