// The adaptive spin before a blocking poll; see spin_poll.h.
#include "protocol/spin_poll.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace hlox::proto {
namespace {

int64_t MicrosSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               t0).count();
}

}  // namespace

int SpinPoller::Poll(zmq::pollitem_t* items, size_t n, int64_t wait_ms) {
  const bool spin = armed_ && max_us_ > 0 && wait_ms > 0;
  armed_ = false;
  auto t0 = std::chrono::steady_clock::now();
  if (spin && budget_us_ > 0) {
    ++spins_;
    do {
      int rc = zmq::poll(items, n, std::chrono::milliseconds(0));
      if (rc > 0) {
        ++hits_;
        return rc;
      }
      // Let a runnable thread (this process's ZeroMQ I/O thread, the peer) have the core: on
      // a loaded machine a hard spin would delay the very message it waits for.
      std::this_thread::yield();
    } while (MicrosSince(t0) < budget_us_);
  }
  int rc = zmq::poll(items, n, std::chrono::milliseconds(wait_ms));
  if (spin) {
    // A message soon after the spin gave up: a longer spin would have caught it.
    if (rc > 0 && MicrosSince(t0) <= max_us_) budget_us_ = max_us_;
    else budget_us_ = budget_us_ < 8 ? 0 : budget_us_ / 2;
  }
  return rc;
}

}  // namespace hlox::proto
