// Fleet-scale benchmark: one `hlox broker` process and N simulated workers (DEALER sockets in
// this process, a few threads polling them) that register and heartbeat at the real protocol's
// interval and answer JOBs at once. Reports, for N = 1000 next to a 2-worker baseline measured
// in the same run: time to register, the broker's CPU while idle (from /proc/<pid>/stat),
// the dispatch rate of no-op jobs across the fleet, and the time until the broker's status
// reports 100 killed (closed, silent) workers as lost.
//   fleet_bench [--workers N] [--kill K]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bench/service/bench_util.h"
#include "protocol/frames.h"
#include "protocol/zmq_util.h"

using namespace hlox;
using namespace hlox::bench;

namespace {

constexpr int kSimThreads = 8;

// N simulated workers spread over kSimThreads threads; each thread polls its sockets, sends a
// heartbeat every interval per socket, answers JOB with DONE and REREGISTER with READY.
class SimFleet {
 public:
  // aligned: heartbeat in the broker's phase as `hlox worker` does (answer its heartbeat,
  // own timer only as a fallback); otherwise free-running, phases spread over the interval.
  SimFleet(const std::string& addr, int n, bool aligned)
      : addr_(addr), aligned_(aligned), alive_(n) {
    ctx_.set(zmq::ctxopt::max_sockets, n + 64);
    ctx_.set(zmq::ctxopt::io_threads, 1);
    ResultRecord r;
    r.status = JobStatus::kOk;
    r.pipeline = "none";
    record_ = proto::EncodeRecord(r);
    for (int i = 0; i < n; ++i) alive_[i] = 1;
    for (int t = 0; t < kSimThreads; ++t) {
      threads_.emplace_back([this, t, n] { Main(t, n); });
    }
  }
  ~SimFleet() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  // Kills workers [0, k): their sockets are closed (linger 0) and they go silent.
  void Kill(int k) {
    for (int i = 0; i < k; ++i) alive_[i] = 0;
  }
  int64_t jobs_done() const { return done_.load(); }

 private:
  void SendReady(zmq::socket_t& s, int i) {
    proto::ReadyMsg r{"sim-" + std::to_string(i), "sim-host", "sim", HLOX_VERSION, 1, 1, 1};
    proto::SendMsg(s, "", proto::Command::kReady, proto::Encode(r));
  }

  void Main(int t, int n) {
    std::vector<int> mine;
    for (int i = t; i < n; i += kSimThreads) mine.push_back(i);
    std::vector<std::unique_ptr<zmq::socket_t>> socks;
    for (int i : mine) {
      socks.push_back(std::make_unique<zmq::socket_t>(
          std::move(*proto::ConnectDealer(ctx_, addr_, "sim-" + std::to_string(i)))));
      SendReady(*socks.back(), i);
    }
    const std::string hb = proto::Encode(proto::HeartbeatMsg{});
    std::vector<int64_t> next_hb(mine.size()), last_hb(mine.size(), 0);
    int64_t now = proto::NowMs();
    for (size_t k = 0; k < mine.size(); ++k) next_hb[k] = now + int64_t(k * 250 / mine.size());
    std::vector<zmq::pollitem_t> items;
    std::vector<size_t> index;
    bool busy = false;
    proto::Received in;
    while (!stop_) {
      items.clear();
      index.clear();
      for (size_t k = 0; k < mine.size(); ++k) {
        if (!socks[k]) continue;
        if (!alive_[mine[k]]) {  // killed: close at once, say nothing more
          socks[k]->set(zmq::sockopt::linger, 0);
          socks[k].reset();
          continue;
        }
        items.push_back({static_cast<void*>(*socks[k]), 0, ZMQ_POLLIN, 0});
        index.push_back(k);
      }
      // Sleep in poll only after an idle pass: with 1000 sockets zmq_poll may sit out its
      // timeout although a socket has a message, which would make this simulator (not the
      // broker) the bottleneck while jobs flow.
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(busy ? 0 : 2));
      busy = false;
      now = proto::NowMs();
      for (size_t p = 0; p < items.size(); ++p) {
        size_t k = index[p];
        zmq::socket_t& s = *socks[k];
        if (items[p].revents & ZMQ_POLLIN) {
          while (proto::RecvMsg(s, false, &in)) {
            busy = true;
            auto f = proto::SplitFrames(in);
            if (!f.ok()) continue;
            if (f->command == proto::Command::kJob) {
              auto j = proto::DecodeJob(f->body);
              if (!j.ok()) continue;
              proto::DoneMsg d{j->job_id, j->attempt, false, record_};
              proto::SendMsg(s, "", proto::Command::kDone, proto::Encode(d));
              ++done_;
            } else if (f->command == proto::Command::kReregister) {
              SendReady(s, mine[k]);
            } else if (f->command == proto::Command::kHeartbeat && aligned_) {
              if (now - last_hb[k] >= 125) {
                proto::SendMsg(s, "", proto::Command::kHeartbeat, hb);
                last_hb[k] = now;
              }
              next_hb[k] = now + 250 + 250 / 4;
            }
          }
        }
        if (now >= next_hb[k]) {
          proto::SendMsg(s, "", proto::Command::kHeartbeat, hb);
          last_hb[k] = now;
          next_hb[k] += 250;
          if (next_hb[k] < now) next_hb[k] = now + 250;
        }
      }
    }
    for (auto& s : socks) if (s) s->set(zmq::sockopt::linger, 0);
  }

  std::string addr_;
  bool aligned_;
  zmq::context_t ctx_;
  std::string record_;
  std::vector<std::atomic<int>> alive_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> done_{0};
  std::vector<std::thread> threads_;
};

// Submits `n` no-op jobs with all of them in flight; returns jobs/s (0 if any is missing).
double DispatchRate(const std::string& addr, int n) {
  auto text = std::make_shared<const std::string>("HloModule fleet\n");
  auto c = std::move(*client::Client::Connect(addr));
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) (void)c->Submit(NoopJob(text));
  int got = 0;
  while (got < n && c->Next(std::chrono::milliseconds(10000))) ++got;
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return got == n ? n / secs : 0.0;
}

struct Figures {
  double register_s = 0, idle_cpu = 0, rate = 0, busy_cpu = 0, sim_cpu = 0, notice_s = -1;
  int64_t lost_dispatching = 0;  // workers the broker lost while jobs flowed (should be 0)
};

Figures Measure(int workers, int kill, int port, int jobs, bool aligned = true) {
  Figures f;
  std::string addr = "tcp://127.0.0.1:" + std::to_string(port);
  std::string control = proto::ControlAddressFor(addr);
  std::string exe = HloxPath();
  pid_t broker = ::fork();
  if (broker == 0) {
    ::execl(exe.c_str(), exe.c_str(), "broker", "--bind", addr.c_str(), nullptr);
    ::_exit(127);
  }
  while (LiveWorkers(control) < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto t0 = Clock::now();
  {
    SimFleet sim(addr, workers, aligned);
    while (LiveWorkers(control) < workers &&
           Clock::now() - t0 < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    f.register_s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // settle
    double c0 = ProcessCpuSeconds(broker);
    auto w0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    f.idle_cpu = (ProcessCpuSeconds(broker) - c0) /
                 std::chrono::duration<double>(Clock::now() - w0).count();
    int64_t lost_before = 0, lost_after = 0;
    LiveWorkers(control, &lost_before);
    double b0 = ProcessCpuSeconds(broker), s0 = ProcessCpuSeconds(::getpid());
    auto d0 = Clock::now();
    f.rate = DispatchRate(addr, jobs);
    double dsecs = std::chrono::duration<double>(Clock::now() - d0).count();
    f.busy_cpu = (ProcessCpuSeconds(broker) - b0) / dsecs;
    f.sim_cpu = (ProcessCpuSeconds(::getpid()) - s0) / dsecs;
    LiveWorkers(control, &lost_after);
    f.lost_dispatching = lost_after - lost_before;
    if (kill > 0) {
      int64_t lost0 = 0, lost = 0;
      LiveWorkers(control, &lost0);
      auto k0 = Clock::now();
      sim.Kill(kill);
      while (Clock::now() - k0 < std::chrono::seconds(30)) {
        if (LiveWorkers(control, &lost) >= 0 && lost - lost0 >= kill) {
          f.notice_s = std::chrono::duration<double>(Clock::now() - k0).count();
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  ::kill(broker, SIGTERM);
  ::waitpid(broker, nullptr, 0);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int workers = 1000, kill = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--workers")) workers = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--kill")) kill = std::atoi(argv[i + 1]);
  }
  const int jobs = 20000;
  Figures base = Measure(2, 0, 47911, jobs);
  std::printf("baseline, 2 simulated workers (credit 1): registered in %.2f s, broker idle CPU "
              "%.2f%% of a core, dispatch %.0f no-op jobs/s (CPU meanwhile: broker %.0f%%, this "
              "process %.0f%%)\n", base.register_s, 100 * base.idle_cpu, base.rate,
              100 * base.busy_cpu, 100 * base.sim_cpu);
  if (workers > 100) {  // a middle point, to see how the figures scale with fleet size
    Figures mid = Measure(100, kill / 10, 47915, jobs);
    std::printf("100 simulated workers: registered in %.2f s, broker idle CPU %.2f%% of a core, "
                "dispatch %.0f no-op jobs/s, %d killed noticed after %.2f s\n", mid.register_s,
                100 * mid.idle_cpu, mid.rate, kill / 10, mid.notice_s);
  }
  // Free-running heartbeat phases (workers before they followed the broker's phase) as the
  // baseline for the broker's idle CPU, then the aligned fleet `hlox worker` now makes.
  Figures free = Measure(workers, kill, 47925, jobs, false);
  std::printf("%d simulated workers, free-running heartbeat phases: broker idle CPU %.2f%% of a "
              "core, dispatch %.0f no-op jobs/s, %d killed noticed as lost after %.2f s\n",
              workers, 100 * free.idle_cpu, free.rate, kill, free.notice_s);
  Figures big = Measure(workers, kill, 47921, jobs);
  std::printf("%d simulated workers (credit 1, heartbeat 250 ms in the broker's phase): registered in %.2f s, broker "
              "idle CPU %.2f%% of a core, dispatch %.0f no-op jobs/s (%.2fx the 2-worker rate), "
              "%d killed noticed as lost after %.2f s; CPU while dispatching: broker %.0f%%, "
              "this process (simulated workers + client) %.0f%%; workers lost while dispatching "
              "%lld\n", workers, big.register_s,
              100 * big.idle_cpu, big.rate, base.rate > 0 ? big.rate / base.rate : 0.0, kill,
              big.notice_s, 100 * big.busy_cpu, 100 * big.sim_cpu,
              static_cast<long long>(big.lost_dispatching));
  return 0;
}
