// Helpers for parser tests: parse with the round-trip golden rule checked, find an instruction
// by name, and check that a text is rejected at an exact line and column.
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "ir/module.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace hlox::testing_ir {

// Parses `text` (expecting success), then checks that print(parse(text)) parses to the same
// module and prints identically. Returns nullptr (with a test failure) when parsing fails.
inline std::unique_ptr<Module> ParseRoundTrip(const std::string& text) {
  auto m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  std::string printed = PrintModule(**m);
  auto again = ParseModule(printed, "printed.hlo");
  EXPECT_TRUE(again.ok()) << again.status() << "\n" << printed;
  if (again.ok()) {
    absl::Status same = CompareModules(**m, **again);
    EXPECT_TRUE(same.ok()) << same << "\n" << printed;
    EXPECT_EQ(PrintModule(**again), printed);
  }
  return std::move(*m);
}

// A module whose root (line 5) is `root`, with parameters a = f32[4] and b = s32[2]; the root's
// text starts at column 12 ("  ROOT r = " is 11 characters).
inline std::string RootModule(const std::string& root) {
  return "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT r = " + root + "\n}\n";
}

// The instruction named `name` in any computation of `m`; nullptr and a failure if none.
inline const Instruction* FindInstr(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// Expects ParseModule(text) to fail with "bad.hlo:LINE:COL: error: ..." containing `part`.
inline void ExpectParseError(const std::string& text, int line, int col, const std::string& part) {
  SCOPED_TRACE(text);
  auto m = ParseModule(text, "bad.hlo");
  ASSERT_FALSE(m.ok()) << "parsed, but should not have";
  std::string msg(m.status().message());
  std::string header = "bad.hlo:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_EQ(msg.substr(0, header.size()), header) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
}

}  // namespace hlox::testing_ir
