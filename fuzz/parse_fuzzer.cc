// libFuzzer entry point: any byte string is parsed as an HLO module (and as a shape). A parse
// must either fail with a located error or give a module that prints, re-parses to the same
// module and prints identically again; the verifier must not crash on it. Anything else aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hlox::ParseShape(text);
  auto m = hlox::ParseModule(text, "fuzz.hlo");
  if (!m.ok()) {
    if (std::string(m.status().message()).rfind("fuzz.hlo:", 0) != 0) {
      std::fprintf(stderr, "unlocated error: %s\n", std::string(m.status().message()).c_str());
      std::abort();
    }
    return 0;
  }
  (void)hlox::VerifyModule(**m);
  std::string printed = hlox::PrintModule(**m);
  auto again = hlox::ParseModule(printed, "printed.hlo");
  if (!again.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n%s\n", std::string(again.status().message()).c_str(),
                 printed.c_str());
    std::abort();
  }
  absl::Status same = hlox::CompareModules(**m, **again);
  if (!same.ok()) {
    std::fprintf(stderr, "round trip differs: %s\n", std::string(same.message()).c_str());
    std::abort();
  }
  if (hlox::PrintModule(**again) != printed) {
    std::fprintf(stderr, "printing is not stable\n");
    std::abort();
  }
  return 0;
}
