// A CPU wake-up latency request through the kernel's PM QoS interface (/dev/cpu_dma_latency).
// While a request of N microseconds is held, the cpuidle governor picks no idle state whose exit
// latency exceeds N; with 0, idle CPUs poll instead of halting. On virtual machines whose idle
// vCPUs halt at once (haltpoll with guest_halt_poll_ns=0) a halted vCPU can take milliseconds
// to wake, which dominates a service of 1 ms jobs; holding 0 removes that at the cost of idle
// CPUs spinning. The request is system-wide and ends when the file descriptor is closed.
#pragma once

#include <memory>

#include "absl/status/statusor.h"

namespace hlox {

class CpuLatencyRequest {
 public:
  // Requests at most `max_us` microseconds of wake-up latency (>= 0) until destroyed. Fails
  // (clearly) without permission (root is needed) or without the device.
  static absl::StatusOr<std::unique_ptr<CpuLatencyRequest>> Hold(int max_us);
  ~CpuLatencyRequest();
  CpuLatencyRequest(const CpuLatencyRequest&) = delete;
  CpuLatencyRequest& operator=(const CpuLatencyRequest&) = delete;

 private:
  explicit CpuLatencyRequest(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The latency limit now in force for the whole system (the smallest held request), in
// microseconds, as the kernel reports it; an error when the device cannot be read.
absl::StatusOr<int> CurrentCpuLatencyLimit();

}  // namespace hlox
