// Machine provenance: every record names the CPU model and the ISA level its kernels ran at, the
// level as it is when the record is made (a worker's --isa, HLOX_ISA or the CPU's best).
#include "cost/provenance.h"

#include "common/cpu_isa.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

TEST(ProvenanceTest, NamesTheCpuModelAndTheActiveIsa) {
  Provenance p = MachineProvenance();
  EXPECT_EQ(p.isa, IsaName(ActiveIsa()));
  EXPECT_NE(p.cpu, "unknown");
  EXPECT_FALSE(p.cpu.empty());
  EXPECT_GT(p.cores, 0);
}

TEST(ProvenanceTest, FollowsTheActiveIsaAsItChanges) {
  // Every level up to the CPU's; generic (always supported) makes it differ from the default
  // on any AVX2 machine.
  for (int i = 0; i <= static_cast<int>(CpuIsa()); ++i) {
    const IsaLevel level = static_cast<IsaLevel>(i);
    ScopedIsa scoped(level);
    EXPECT_EQ(MachineProvenance().isa, IsaName(level));
  }
}

}  // namespace
}  // namespace hlox
