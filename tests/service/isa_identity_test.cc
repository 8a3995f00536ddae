// The instruction-set level is part of a measurement's identity: the class rule
// (protocol/hardware_class.h), `hlox worker --isa` and its errors, and real workers run at the
// generic level (by HLOX_ISA and by --isa) registering under a class that ends in it, reporting
// it in READY and stamping it into every record's provenance.
#include <sys/wait.h>

#include <cstdio>
#include <utility>

#include "client/client.h"
#include "common/cpu_isa.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/hardware_class.h"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"
#include "tests/test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

TEST(HardwareClass, AppendsTheLevelUnlessTheClassAlreadyEndsInIt) {
  EXPECT_EQ(*proto::EffectiveHardwareClass("cpu", IsaLevel::kAvx2), "cpu-avx2");
  EXPECT_EQ(*proto::EffectiveHardwareClass("local", IsaLevel::kAvx512), "local-avx512");
  EXPECT_EQ(*proto::EffectiveHardwareClass("cpu", IsaLevel::kGeneric), "cpu-generic");
  EXPECT_EQ(*proto::EffectiveHardwareClass("cpu-avx2", IsaLevel::kAvx2), "cpu-avx2");
  EXPECT_EQ(*proto::EffectiveHardwareClass("epyc-2c-generic", IsaLevel::kGeneric),
            "epyc-2c-generic");
  // "avx2" alone and "xavx2" are names, not suffixes.
  EXPECT_EQ(*proto::EffectiveHardwareClass("avx2", IsaLevel::kAvx2), "avx2-avx2");
  EXPECT_EQ(*proto::EffectiveHardwareClass("cpuavx2", IsaLevel::kAvx2), "cpuavx2-avx2");
}

TEST(HardwareClass, RefusesAClassNamingAnotherLevel) {
  absl::StatusOr<std::string> c = proto::EffectiveHardwareClass("cpu-avx512", IsaLevel::kAvx2);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("avx512"), absl::string_view::npos) << c.status();
  EXPECT_FALSE(proto::EffectiveHardwareClass("cpu-generic", IsaLevel::kAvx2).ok());
  EXPECT_FALSE(proto::EffectiveHardwareClass("", IsaLevel::kAvx2).ok());
  EXPECT_FALSE(proto::EffectiveHardwareClass(std::string(proto::kMaxNameBytes, 'c'),
                                             IsaLevel::kAvx2).ok());
}

TEST(HardwareClass, ReadsTheLevelBackFromAClass) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const IsaLevel level = static_cast<IsaLevel>(i);
    EXPECT_EQ(proto::HardwareClassIsa(*proto::EffectiveHardwareClass("cpu", level)), level);
  }
  EXPECT_EQ(proto::HardwareClassIsa("cpu"), std::nullopt);
  EXPECT_EQ(proto::HardwareClassIsa("generic"), std::nullopt);
}

TEST(WorkerIsaFlag, BadLevelsFailAtOnceWithAClearMessage) {
  // No broker listens there: each of these must fail before it would try to connect.
  const std::string worker = "worker --broker tcp://127.0.0.1:9 ";
  // Bounded (30 s), so a supervisor that loops fails instead of hanging.
  CliRun r = RunHlox(worker + "--isa sse9", true, 30);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'sse9'"), std::string::npos) << r.out;
  r = RunHlox(worker + "--isa sse9 --supervise", true, 30);
  EXPECT_EQ(r.code, 1) << "a supervisor must not restart a worker that cannot start: " << r.out;
  r = RunHlox(worker + "--class cpu-avx2 --isa generic", true, 30);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'cpu-avx2' names instruction-set level avx2"), std::string::npos) << r.out;
  if (CpuIsa() < IsaLevel::kAvx512) {
    r = RunHlox(worker + "--isa avx512", true, 30);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("supports at most"), std::string::npos) << r.out;
  }
}

// Two workers told to run generic kernels, one by the environment and one by the flag: both
// register as "cpu-generic" with isa "generic", and every record they make says generic.
TEST(WorkerIsaFlag, GenericWorkersRegisterAndMeasureAsGeneric) {
  const std::string addr = TcpAddress(FreePortPair());
  const std::string control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr);
  auto by_env = StartWorker(addr, "g-env", {}, {"HLOX_ISA=generic"});
  auto by_flag = StartWorker(addr, "g-flag", {"--isa", "generic"});
  ASSERT_TRUE(WaitForWorkers(control, 2, 10s));
  auto st = client::ControlRequest(control, "status");
  ASSERT_TRUE(st.ok()) << st.status();
  auto status = nlohmann::json::parse(*st);
  ASSERT_EQ(status["workers"].size(), 2u);
  for (const auto& w : status["workers"]) {
    EXPECT_EQ(w["hardware_class"], "cpu-generic") << w.dump();
    EXPECT_EQ(w["isa"], "generic") << w.dump();
  }
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 6;
  for (int i = 0; i < n; ++i) {
    client::JobSpec j;
    j.id = "g" + std::to_string(i);
    j.campaign = "generic";
    j.module_text = text;
    j.hardware_class = "cpu-generic";  // a pin on the whole class reaches these workers
    j.use_cache = false;
    ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
  }
  auto results = Collect(**client, n, 30s, nullptr);
  ASSERT_EQ(results.size(), size_t(n));
  for (const auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id << ": " << r.record.message;
    EXPECT_EQ(r.record.provenance.isa, "generic") << id;
    EXPECT_EQ(r.record.provenance.hardware_class, "cpu-generic") << id;
    EXPECT_NE(r.record.provenance.cpu, "") << id;
  }
}

}  // namespace
}  // namespace hlox::testing
