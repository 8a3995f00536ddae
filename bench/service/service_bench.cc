// Service benchmark: direct DEALER->ROUTER baselines vs the broker with echo/sleep workers (real
// `hlox worker` processes next to this binary, or $HLOX_BIN), measured in the same run.
// Reports: no-op jobs/s with many in flight (ratio to the direct pipelined rate), one job in
// flight p50/p99 (ratio to the direct round trip), 1 ms jobs on 2 workers vs ideal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "agent/client.h"
#include "broker/broker.h"
#include "broker/zmq_util.h"

using namespace hlox;
using Clock = std::chrono::steady_clock;

namespace {

std::string HloxPath() {
  if (const char* e = std::getenv("HLOX_BIN")) return e;
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string self(buf, n > 0 ? size_t(n) : 0);
  return self.substr(0, self.rfind('/')) + "/hlox";
}

// Direct baseline: an echo ROUTER thread; returns (pipelined msgs/s, p50 us, p99 us).
void DirectBaseline(double* rate, double* p50, double* p99) {
  zmq::context_t ctx(1);
  std::string addr = "tcp://127.0.0.1:47811";
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    auto r = proto::BindRouter(ctx, addr);
    proto::Received in;
    while (!stop) {
      zmq::pollitem_t it{static_cast<void*>(*r), 0, ZMQ_POLLIN, 0};
      zmq::poll(&it, 1, std::chrono::milliseconds(50));
      while (proto::RecvMsg(*r, true, &in)) {
        proto::SendMsg(*r, in.identity, proto::Command::kResult, "x");
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto d = proto::ConnectDealer(ctx, addr, "bench");
  proto::Received in;
  auto wait1 = [&] {
    zmq::pollitem_t it{static_cast<void*>(*d), 0, ZMQ_POLLIN, 0};
    while (!proto::RecvMsg(*d, false, &in)) zmq::poll(&it, 1, std::chrono::milliseconds(100));
  };
  std::vector<double> lat;
  for (int i = 0; i < 3000; ++i) {
    auto t0 = Clock::now();
    proto::SendMsg(*d, "", proto::Command::kSubmit, "x");
    wait1();
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(lat.begin(), lat.end());
  *p50 = lat[lat.size() / 2];
  *p99 = lat[lat.size() * 99 / 100];
  const int n = 200000;
  auto t0 = Clock::now();
  int sent = 0, got = 0;
  while (got < n) {
    while (sent < n && sent - got < 1000 &&
           proto::SendMsg(*d, "", proto::Command::kSubmit, "x") == proto::SendResult::kOk) ++sent;
    zmq::pollitem_t it{static_cast<void*>(*d), 0, ZMQ_POLLIN, 0};
    zmq::poll(&it, 1, std::chrono::milliseconds(10));
    while (proto::RecvMsg(*d, false, &in)) ++got;
  }
  *rate = n / std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  echo.join();
}

struct Fleet {
  std::unique_ptr<broker::Broker> b;
  std::thread t;
  std::vector<pid_t> pids;
  ~Fleet() {
    for (pid_t p : pids) ::kill(p, SIGKILL);
    for (pid_t p : pids) ::waitpid(p, nullptr, 0);
    b->Stop();
    t.join();
  }
};

std::unique_ptr<Fleet> StartFleet(const std::string& addr, int workers, const std::string& mode,
                                  int credit) {
  auto f = std::make_unique<Fleet>();
  broker::BrokerOptions o;
  o.bind = addr;
  f->b = std::move(*broker::Broker::Create(o));
  f->t = std::thread([p = f->b.get()] { (void)p->Run(); });
  for (int i = 0; i < workers; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string exe = HloxPath(), id = "bw" + std::to_string(i), cr = std::to_string(credit);
      ::execl(exe.c_str(), exe.c_str(), "worker", "--broker", addr.c_str(), "--id", id.c_str(),
              "--test-mode", mode.c_str(), "--credit", cr.c_str(), nullptr);
      ::_exit(127);
    }
    f->pids.push_back(pid);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  return f;
}

agent::JobSpec NoopJob(std::shared_ptr<const std::string> text) {
  agent::JobSpec j;
  j.module_text = std::move(text);
  j.pipeline = "none";
  j.use_cache = false;
  return j;
}

}  // namespace

int main() {
  double direct_rate, direct_p50, direct_p99;
  DirectBaseline(&direct_rate, &direct_p50, &direct_p99);
  std::printf("direct DEALER->ROUTER: pipelined %.0f msg/s, round trip p50 %.1f us p99 %.1f us\n",
              direct_rate, direct_p50, direct_p99);
  auto text = std::make_shared<const std::string>("HloModule bench\n");
  {
    std::string addr = "tcp://127.0.0.1:47821";
    auto fleet = StartFleet(addr, 2, "echo", 64);
    auto c = std::move(*agent::Client::Connect(addr));
    // One in flight.
    std::vector<double> lat;
    for (int i = 0; i < 2000; ++i) {
      auto t0 = Clock::now();
      (void)c->Submit(NoopJob(text));
      while (!c->Next(std::chrono::milliseconds(1000))) {}
      lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::sort(lat.begin(), lat.end());
    double p50 = lat[lat.size() / 2], p99 = lat[lat.size() * 99 / 100];
    std::printf("broker, one job in flight: p50 %.1f us (%.2fx direct), p99 %.1f us\n", p50,
                p50 / direct_p50, p99);
    // Many in flight.
    const int n = 100000;
    auto t0 = Clock::now();
    std::thread sub([&] { for (int i = 0; i < n; ++i) (void)c->Submit(NoopJob(text)); });
    int got = 0;
    while (got < n) {
      auto r = c->Next(std::chrono::milliseconds(5000));
      if (!r) break;
      ++got;
    }
    sub.join();
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("broker, no-op jobs many in flight: %d jobs in %.2f s = %.0f jobs/s (%.2f of direct "
                "pipelined)\n", got, secs, got / secs, got / secs / direct_rate);
  }
  {
    std::string addr = "tcp://127.0.0.1:47831";
    auto fleet = StartFleet(addr, 2, "sleep-1", 2);
    auto c = std::move(*agent::Client::Connect(addr));
    const int n = 2000;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) (void)c->Submit(NoopJob(text));
    int got = 0;
    while (got < n && c->Next(std::chrono::milliseconds(5000))) ++got;
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    double ideal = n * 1e-3 / 2;
    std::printf("1 ms jobs on 2 workers (credit 2): %.0f jobs/s, %.1f%% of ideal\n", got / secs,
                100.0 * ideal / secs);
  }
  // End to end: real evaluations (forked per job) of a small module on 1 and 2 workers.
  auto add = std::make_shared<const std::string>(
      "HloModule add\n\nENTRY main {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] add(a, b)\n}\n");
  for (int workers : {1, 2}) {
    std::string addr = "tcp://127.0.0.1:" + std::to_string(47840 + workers * 2);
    auto fleet = StartFleet(addr, workers, "", 2);
    auto c = std::move(*agent::Client::Connect(addr));
    const int n = 60;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      agent::JobSpec j = NoopJob(add);
      j.pipeline = "default";
      (void)c->Submit(j);
    }
    int got = 0, ok = 0;
    while (got < n) {
      auto r = c->Next(std::chrono::milliseconds(20000));
      if (!r) break;
      ++got;
      ok += r->record.status == JobStatus::kOk;
    }
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("end to end, %d real worker(s): %.1f evaluations/s (%d/%d OK)\n", workers,
                got / secs, ok, n);
  }
  return 0;
}
