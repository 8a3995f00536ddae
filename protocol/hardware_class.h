// Hardware classes carry the instruction-set level. A class names workers whose costs are
// comparable, and costs measured at different ISA levels (common/cpu_isa.h) are not, so the
// class a worker registers under always ends in its active level: `hlox worker --class cpu`
// on an AVX2 machine registers as "cpu-avx2", and the broker, which pins each campaign to one
// class, then never mixes levels within a campaign.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/cpu_isa.h"

namespace hlox::proto {

// The class a worker whose kernels run at `isa` registers under: `requested` + "-" + IsaName(isa)
// ("cpu" -> "cpu-avx2"), or `requested` unchanged when it already ends in "-" + IsaName(isa).
// InvalidArgument when it is empty, ends in another level's suffix, or the result is too long.
absl::StatusOr<std::string> EffectiveHardwareClass(std::string_view requested, IsaLevel isa);

// The level a class ends in ("cpu-avx2" -> kAvx2, "cpu" -> nullopt).
std::optional<IsaLevel> HardwareClassIsa(std::string_view hardware_class);

// The class without its level suffix ("cpu-avx2" -> "cpu"); a class without one unchanged.
// A job pinned to such a bare class runs on that class at whatever level the worker that
// takes it runs, and a campaign pinned so is held to the first level it runs at.
std::string_view HardwareClassBase(std::string_view hardware_class);

}  // namespace hlox::proto
