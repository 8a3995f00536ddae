// The PM QoS CPU latency request (common/cpu_latency.h) and `hlox worker --cpu-latency-us`: the
// system-wide limit the kernel reports follows the request while it is held and returns to its
// old value when it is released (or the worker exits). Needs root; skipped otherwise.
#include "common/cpu_latency.h"

#include <signal.h>

#include <thread>

#include "gtest/gtest.h"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

TEST(CpuLatency, HoldSetsTheSystemLimitAndReleaseRestoresIt) {
  absl::StatusOr<int> before = CurrentCpuLatencyLimit();
  if (!before.ok()) GTEST_SKIP() << before.status().message();
  EXPECT_FALSE(CpuLatencyRequest::Hold(-1).ok());
  {
    auto held = CpuLatencyRequest::Hold(0);
    if (!held.ok()) GTEST_SKIP() << held.status().message();
    EXPECT_EQ(*CurrentCpuLatencyLimit(), 0);
  }
  EXPECT_EQ(*CurrentCpuLatencyLimit(), *before);
}

TEST(CpuLatency, WorkerHoldsTheLimitWhileItRuns) {
  absl::StatusOr<int> before = CurrentCpuLatencyLimit();
  if (!before.ok()) GTEST_SKIP() << before.status().message();
  if (*before == 0) GTEST_SKIP() << "another process already holds the limit at 0";
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto worker = StartWorker(addr, "lat", {"--test-mode", "echo", "--cpu-latency-us", "0"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  EXPECT_EQ(*CurrentCpuLatencyLimit(), 0);
  worker->Kill(SIGTERM);
  EXPECT_NE(worker->Wait(10s), -1);
  EXPECT_EQ(*CurrentCpuLatencyLimit(), *before);
}

}  // namespace
}  // namespace hlox::testing
