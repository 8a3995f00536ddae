// Adaptive busy-poll in front of a blocking zmq::poll. Waking a thread blocked in zmq_poll
// costs a futex/eventfd wake-up and a context switch on each hop; when a reply is expected
// within microseconds (a job just went to a worker, a result just went to an agent), polling
// with timeout 0 for a short while picks it up without that sleep. The spin only follows
// Arm() (job traffic, never heartbeats), and its budget halves after each spin that found
// nothing and comes back to the maximum when a message arrives soon after a wasted spin, so an
// idle process spins at most a few microseconds per job message and not at all otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zmq.hpp"

namespace hlox::proto {

class SpinPoller {
 public:
  // max_spin_us 0 disables spinning (Poll is then exactly zmq::poll).
  explicit SpinPoller(int max_spin_us) : max_us_(max_spin_us), budget_us_(max_spin_us) {}
  // The next Poll may spin: something was just sent that is likely to be answered quickly.
  void Arm() { armed_ = true; }
  // zmq::poll(items, n, wait_ms) with the spin first when armed; returns the ready count (0
  // on timeout). Throws zmq::error_t like zmq::poll.
  int Poll(zmq::pollitem_t* items, size_t n, int64_t wait_ms);

  int64_t spins() const { return spins_; }  // armed polls that spun
  int64_t hits() const { return hits_; }    // ... and found a message while spinning

 private:
  int max_us_, budget_us_;
  bool armed_ = false;
  int64_t spins_ = 0, hits_ = 0;
};

}  // namespace hlox::proto
