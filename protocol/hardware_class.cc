// The effective hardware class of a worker: its requested class plus its ISA level.
#include "protocol/hardware_class.h"

#include "absl/strings/str_cat.h"
#include "protocol/protocol.h"

namespace hlox::proto {

std::optional<IsaLevel> HardwareClassIsa(std::string_view hardware_class) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const IsaLevel level = static_cast<IsaLevel>(i);
    const std::string suffix = absl::StrCat("-", std::string(IsaName(level)));
    if (hardware_class.size() > suffix.size() &&
        hardware_class.substr(hardware_class.size() - suffix.size()) == suffix) {
      return level;
    }
  }
  return std::nullopt;
}

std::string_view HardwareClassBase(std::string_view hardware_class) {
  const std::optional<IsaLevel> level = HardwareClassIsa(hardware_class);
  if (!level) return hardware_class;
  return hardware_class.substr(0, hardware_class.size() - 1 - IsaName(*level).size());
}

absl::StatusOr<std::string> EffectiveHardwareClass(std::string_view requested, IsaLevel isa) {
  const std::string name(IsaName(isa));
  if (requested.empty()) return absl::InvalidArgumentError("the hardware class is empty");
  if (std::optional<IsaLevel> named = HardwareClassIsa(requested)) {
    if (*named == isa) return std::string(requested);
    return absl::InvalidArgumentError(absl::StrCat(
        "hardware class '", std::string(requested), "' names instruction-set level ",
        std::string(IsaName(*named)), " but this worker's kernels run at ", name,
        " (pass --isa ", std::string(IsaName(*named)), " or a class without a level suffix)"));
  }
  std::string effective = absl::StrCat(std::string(requested), "-", name);
  if (effective.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("hardware class '", effective, "' is longer than ",
                                                   kMaxNameBytes, " bytes"));
  }
  return effective;
}

}  // namespace hlox::proto
