// Text spellings of the enum-valued attributes.
#include "ir/attributes.h"

namespace hlox {
namespace {
constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::string_view kFusionKinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};
}  // namespace

std::string_view ComparisonDirectionName(ComparisonDirection d) { return kDirections[static_cast<int>(d)]; }

std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view s) {
  for (int i = 0; i < 6; ++i) {
    if (kDirections[i] == s) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}

std::string_view FusionKindName(FusionKind k) { return kFusionKinds[static_cast<int>(k)]; }

std::optional<FusionKind> ParseFusionKind(std::string_view s) {
  for (int i = 0; i < 4; ++i) {
    if (kFusionKinds[i] == s) return static_cast<FusionKind>(i);
  }
  return std::nullopt;
}

}  // namespace hlox
