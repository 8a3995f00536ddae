// KernelsFor (isa/isa_kernels.h): the table of each level, defined in isa/level_<level>.cc.
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt {

extern const IsaKernels kIsaGeneric, kIsaAvx2, kIsaAvx512;

const IsaKernels& KernelsFor(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return kIsaGeneric;
    case IsaLevel::kAvx2: return kIsaAvx2;
    case IsaLevel::kAvx512: return kIsaAvx512;
  }
  return kIsaGeneric;
}

}  // namespace hlox::rt
