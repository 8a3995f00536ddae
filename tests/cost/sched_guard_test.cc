// Scheduler guard: parsing of /proc/stat and schedstat text, snapshot differences, the
// disturbed rule, and the protocols (plain and paired) driven by a fake clock and synthetic
// kernel counters, so which samples are left out is known exactly.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

#include "cost/paired.h"
#include "cost/result_json.h"
#include "cost/sched_guard.h"
#include "cost/sched_stats.h"
#include "cost/timing.h"
#include "gtest/gtest.h"
#include "tests/cost/fake_clock.h"

namespace hlox {
namespace {

using testing::FakeClock;

constexpr char kProcStat[] =
    "cpu  5866399 138132 664048 1246276 7642 0 8165 120349 0 0\n"
    "cpu0 2913347 66345 340921 639659 2095 0 3402 59770 0 0\n"
    "cpu1 2953051 71786 323126 606616 5547 0 4763 60579 0 0\n"
    "intr 26850979 0 0 0\n"
    "ctxt 123456\n"
    "procs_running 3\n"
    "procs_blocked 0\n";

TEST(SchedStatsTest, ParsesSchedstat) {
  auto t = ParseSchedstat("1776435011 255006789 2139\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->exec_ns, 1776435011);
  EXPECT_EQ(t->wait_ns, 255006789);
  EXPECT_EQ(t->slices, 2139);
  EXPECT_TRUE(ParseSchedstat("0 0 0").ok());
  for (const char* bad : {"", "\n", "1 2", "1 -2 3", "a b c", "1 2 3 4", "1 2 3x", "1,2,3"}) {
    EXPECT_FALSE(ParseSchedstat(bad).ok()) << "'" << bad << "'";
  }
}

TEST(SchedStatsTest, ParsesProcStat) {
  auto steal = ParseProcStatSteal(kProcStat);
  ASSERT_TRUE(steal.ok()) << steal.status();
  EXPECT_EQ(*steal, 120349);  // the aggregate line's 8th number, not cpu0's or cpu1's
  auto running = ParseProcStatRunning(kProcStat);
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(*running, 3);
  // Only per-CPU lines, a short aggregate line, garbage, nothing.
  EXPECT_FALSE(ParseProcStatSteal("cpu0 1 2 3 4 5 6 7 8\n").ok());
  EXPECT_FALSE(ParseProcStatSteal("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7 8\n").ok());
  EXPECT_FALSE(ParseProcStatSteal("cpu  1 2 x 4 5 6 7 8\n").ok());
  EXPECT_FALSE(ParseProcStatSteal("").ok());
  EXPECT_FALSE(ParseProcStatRunning("cpu  1 2 3 4 5 6 7 8\n").ok());
  EXPECT_FALSE(ParseProcStatRunning("xprocs_running 4\n").ok());
  EXPECT_FALSE(ParseProcStatRunning("procs_running -1\n").ok());
}

SchedSnapshot Snap(double wall, double steal, double exec, double wait, int64_t running,
                   std::map<int64_t, ThreadSchedTimes> threads) {
  SchedSnapshot s;
  s.ok = true;
  s.wall = wall;
  s.steal = steal;
  s.self_exec = exec;
  s.self_wait = wait;
  s.running = running;
  s.threads = std::move(threads);
  return s;
}

TEST(SchedStatsTest, DifferenceOfSnapshots) {
  // Thread 1 (the caller) waited 2 ms more, thread 2 waited 1 ms more, thread 3 appeared with
  // 4 ms of wait, thread 4 exited (its history is not subtracted).
  SchedSnapshot a = Snap(10.0, 1.00, 5.0, 0.5, 3, {{1, {0, 500'000'000, 0}}, {2, {0, 1'000'000, 0}},
                                                  {4, {0, 9'000'000'000, 0}}});
  SchedSnapshot b = Snap(10.1, 1.02, 5.09, 0.502, 2, {{1, {0, 502'000'000, 0}}, {2, {0, 2'000'000, 0}},
                                                    {3, {0, 4'000'000, 0}}});
  SchedDelta d = Difference(a, b);
  EXPECT_NEAR(d.wall, 0.1, 1e-12);
  EXPECT_NEAR(d.steal, 0.02, 1e-12);
  EXPECT_NEAR(d.run_wait, 0.007, 1e-12);
  EXPECT_NEAR(d.self_stolen, 0.1 - 0.09 - 0.002, 1e-12);
  EXPECT_EQ(d.others_running, 1);  // min(3, 2) - the caller
  // Unreadable counters give zero deltas (and so never disturb).
  SchedSnapshot bad;
  bad.wall = 10.2;
  SchedDelta z = Difference(b, bad);
  EXPECT_NEAR(z.wall, 0.1, 1e-12);
  EXPECT_EQ(z.steal, 0);
  EXPECT_EQ(z.run_wait, 0);
  EXPECT_EQ(z.self_stolen, 0);
}

TEST(SchedGuardTest, DisturbedRule) {
  SchedDelta d;
  d.wall = 0.010;
  d.self_stolen = 0.0004;
  d.steal = 0;  // below one tick: the thread's own figure counts
  EXPECT_NEAR(ChargedSteal(d, 0.01), 0.0004, 1e-15);
  EXPECT_FALSE(SchedDisturbed(d, 0.05, 0.01));  // 4% of the sample
  d.run_wait = 0.0002;
  EXPECT_TRUE(SchedDisturbed(d, 0.05, 0.01));   // 6%
  EXPECT_FALSE(SchedDisturbed(d, 0, 0.01));     // rule off
  // A thread that slept 30 ms waiting for workers while the system saw no steal: its own
  // figure is capped at the system's steal plus one tick.
  SchedDelta sleep;
  sleep.wall = 0.100;
  sleep.self_stolen = 0.030;
  EXPECT_NEAR(ChargedSteal(sleep, 0.01), 0.01, 1e-15);
  EXPECT_TRUE(SchedDisturbed(sleep, 0.05, 0.01));
  EXPECT_FALSE(SchedDisturbed(sleep, 0.2, 0.01));
  // 4 ms of wait in a 10 ms interval whose timed sample lasted 5 ms: it may all have fallen in
  // the 5 untimed ms (reading the counters), so the sample is clean; with a 9 ms sample at
  // least 3 ms fell inside it.
  SchedDelta gap;
  gap.wall = 0.010;
  gap.run_wait = 0.004;
  EXPECT_FALSE(SchedDisturbed(gap, 0.05, 0.01, 0.005));
  EXPECT_TRUE(SchedDisturbed(gap, 0.05, 0.01, 0.009));
  EXPECT_FALSE(SchedDisturbed(gap, 0.5, 0.01, 0.009));  // 3 ms < 4.5 ms
}

// A workload whose calls take 2 ms of run time; calls (first, last] also wait `wait` seconds
// on the run queue and lose `steal` seconds to the hypervisor. The synthetic kernel counters
// follow the fake clock.
struct Contended {
  FakeClock* clock;
  int first, last;
  double wait = 0, steal = 0;
  int calls = 0;
  double exec_total = 0, wait_total = 0, steal_total = 0;
  void Work() {
    ++calls;
    bool hit = calls > first && calls <= last;
    clock->Advance(2e-3 + (hit ? wait + steal : 0));
    exec_total += 2e-3;
    if (hit) {
      wait_total += wait;
      steal_total += steal;
    }
  }
  SchedSnapshot Read() const {
    auto ns = [](double s) { return static_cast<int64_t>(s * 1e9 + 0.5); };
    return Snap(clock->now, steal_total, exec_total, wait_total, 1,
                {{7, {ns(exec_total), ns(wait_total), calls}}});
  }
};

TEST(SchedGuardTest, ProtocolLeavesOutSamplesWithWaitOrSteal) {
  struct Case {
    double wait, steal;
  };
  for (Case c : {Case{1e-3, 0}, Case{0, 1e-3}}) {
    for (double threshold : {0.05, 0.0}) {
      FakeClock clock;
      Contended w{&clock, 10, 20, c.wait, c.steal};
      TimingProtocol p;
      p.warmups = 2;
      p.max_samples = 30;
      p.target_rel_error = -1;  // run to max_samples
      p.time_cap_seconds = 1e9;
      p.sched_threshold = threshold;
      CostDistribution d = MeasureCost([&] { w.Work(); }, p, 1, std::ref(clock), {},
                                       [&] { return w.Read(); });
      double worst = *std::max_element(d.samples.begin(), d.samples.end());
      // Calls 11..20 are samples 9..18 (two warm-ups); 30 undisturbed samples are kept.
      EXPECT_EQ(d.disturbed, threshold > 0 ? 10 : 0);
      EXPECT_EQ(d.samples.size(), 30u);
      EXPECT_NEAR(worst, threshold > 0 ? 2e-3 : 3e-3, 1e-12);
      // Totals over every sample, disturbed or not: ten of 1 ms each.
      EXPECT_NEAR(d.steal_seconds, c.steal * 10, 1e-9);
      EXPECT_NEAR(d.run_wait_seconds, c.wait * 10, 1e-9);
      EXPECT_NEAR(d.sampled_seconds, (threshold > 0 ? 40 : 30) * 2e-3 + 10e-3, 1e-9);
    }
  }
}

TEST(SchedGuardTest, NeverQuietKeepsAllAndIsUnstable) {
  // Every call waits: too few quiet samples exist, so all are kept and the result is unstable.
  FakeClock clock;
  Contended w{&clock, 0, 1 << 30, 1e-3, 0};
  TimingProtocol p;
  p.time_cap_seconds = 0.05;
  p.sched_threshold = 0.05;
  CostDistribution d = MeasureCost([&] { w.Work(); }, p, 1, std::ref(clock), {},
                                   [&] { return w.Read(); });
  EXPECT_TRUE(d.unstable);
  EXPECT_EQ(d.disturbed, 0);
  EXPECT_NEAR(d.median, 3e-3, 1e-12);
  EXPECT_GE(clock.now, p.time_cap_seconds * p.interference_cap_factor);
}

TEST(SchedGuardTest, PairedLeavesOutDisturbedRounds) {
  // Identical 2 ms workloads; the candidate's calls 21..40 wait 1 ms on the run queue. Those
  // rounds are left out with the guard, so every kept ratio is 1.
  for (double threshold : {0.05, 0.0}) {
    FakeClock clock;
    Contended base{&clock, 0, 0}, cand{&clock, 20, 40, 1e-3, 0};
    TimingProtocol p;
    p.max_samples = 60;
    p.target_rel_error = -1;
    p.time_cap_seconds = 1e9;
    p.sched_threshold = threshold;
    auto read = [&] {
      SchedSnapshot s = cand.Read();
      s.self_exec += base.exec_total;
      s.threads[7].exec_ns += static_cast<int64_t>(base.exec_total * 1e9 + 0.5);
      return s;
    };
    PairedResult r = MeasurePaired([&] { base.Work(); }, [&] { cand.Work(); }, p, 3,
                                   std::ref(clock), {}, read);
    double worst = *std::max_element(r.ratios.begin(), r.ratios.end());
    EXPECT_NEAR(worst, threshold > 0 ? 1.0 : 1.5, 1e-9);
    EXPECT_EQ(r.candidate.disturbed, threshold > 0 ? 20 : 0);
    EXPECT_NEAR(r.candidate.run_wait_seconds, 20e-3, 1e-9);
    EXPECT_NEAR(r.ratio, 1.0, 1e-9);
  }
}

TEST(SchedGuardTest, RecordKeysRoundTripAndAreOptional) {
  ResultRecord r;
  r.cost.median = 1e-3;
  r.cost.samples = {1e-3};
  r.cost.steal_seconds = 0.25;
  r.cost.run_wait_seconds = 0.5;
  r.cost.sampled_seconds = 2;
  nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["cost"]["steal_seconds"], 0.25);
  EXPECT_EQ(j["cost"]["run_wait_seconds"], 0.5);
  EXPECT_EQ(j["cost"]["sampled_seconds"], 2.0);
  auto back = ResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->cost.steal_seconds, 0.25);
  EXPECT_EQ(back->cost.run_wait_seconds, 0.5);
  EXPECT_EQ(back->cost.sampled_seconds, 2.0);
  // A record written before these keys existed still reads, with zeros.
  j["cost"].erase("steal_seconds");
  j["cost"].erase("run_wait_seconds");
  j["cost"].erase("sampled_seconds");
  auto old = ResultFromJson(j);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->cost.steal_seconds, 0);
  EXPECT_EQ(old->cost.sampled_seconds, 0);
  EXPECT_EQ(old->cost.median, 1e-3);
}

TEST(SchedStatsTest, ReadsThisProcess) {
  // On Linux with /proc: the counters are readable, this thread is listed, and a second thread
  // that exists during the read is listed too.
  std::atomic<bool> go{false}, done{false};
  std::atomic<long> tid{0};
  std::thread t([&] {
    tid = static_cast<long>(syscall(SYS_gettid));
    go = true;
    while (!done) std::this_thread::yield();
  });
  while (!go) std::this_thread::yield();
  SchedSnapshot s = ReadSchedSnapshot();
  done = true;
  t.join();
  if (!s.ok) GTEST_SKIP() << "no /proc scheduler counters here";
  EXPECT_TRUE(s.threads.count(static_cast<long>(syscall(SYS_gettid))));
  EXPECT_TRUE(s.threads.count(tid.load()));
  EXPECT_GE(s.running, 1);
  EXPECT_GE(s.steal, 0);
  SchedSnapshot later = ReadSchedSnapshot();
  SchedDelta d = Difference(s, later);
  EXPECT_GE(d.wall, 0);
  EXPECT_GE(d.run_wait, 0);
}

}  // namespace
}  // namespace hlox
