// What the kernel says about interference with this process: the hypervisor's steal time
// (/proc/stat, the 8th number of the `cpu` line: time the host ran something else while this
// guest's vCPUs wanted to run) and each thread's run-queue wait and run time
// (/proc/self/task/*/schedstat: time runnable but waiting behind other tasks of this guest, and
// time on a CPU). With paravirtual steal accounting a thread's run time excludes steal, so for a
// thread that never sleeps, wall time - run time - wait = the steal that thread suffered, at
// nanosecond resolution (the /proc/stat counter has 10 ms ticks and covers all CPUs).
// Reading a snapshot costs a few file reads (about 10-30 us): take them at sample boundaries.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "absl/status/statusor.h"

namespace hlox {

// One line of /proc/<pid>/task/<tid>/schedstat: "exec_ns wait_ns timeslices".
struct ThreadSchedTimes {
  int64_t exec_ns = 0;   // time on a CPU (steal excluded under paravirtual accounting)
  int64_t wait_ns = 0;   // time runnable, waiting on a run queue
  int64_t slices = 0;    // times it was scheduled in
};

// Parses a schedstat line; an error for anything but three non-negative integers.
absl::StatusOr<ThreadSchedTimes> ParseSchedstat(std::string_view text);
// The steal column of /proc/stat's aggregate `cpu` line, in clock ticks; an error when the text
// has no `cpu ` line or it has fewer than 8 numbers.
absl::StatusOr<int64_t> ParseProcStatSteal(std::string_view text);
// The `procs_running` value of /proc/stat (runnable tasks in the guest, the reader included);
// an error when the line is missing or malformed.
absl::StatusOr<int64_t> ParseProcStatRunning(std::string_view text);

// The interference counters at one instant. `ok` is false where the files are missing (not
// Linux, a restricted /proc): then every delta is zero and nothing counts as disturbed.
struct SchedSnapshot {
  bool ok = false;
  double wall = 0;              // seconds on the steady clock
  double steal = 0;             // system-wide steal (all CPUs), seconds; 10 ms resolution
  double self_exec = 0;         // the calling thread's run time, seconds
  double self_wait = 0;         // the calling thread's run-queue wait, seconds
  int64_t running = 0;          // runnable tasks in the guest at this instant, this one included
  std::map<int64_t, ThreadSchedTimes> threads;  // every thread of this process, by tid
};

// Reads the counters now (/proc/stat, /proc/thread-self/schedstat, /proc/self/task/*/schedstat).
SchedSnapshot ReadSchedSnapshot();

// What happened between two snapshots, in seconds (zero when either is not ok).
struct SchedDelta {
  double wall = 0;
  double steal = 0;        // system-wide steal over all CPUs (/proc/stat)
  double run_wait = 0;     // run-queue wait summed over the threads present in `to`
  double self_stolen = 0;  // calling thread: wall - run - wait (steal, plus any time it slept)
  int64_t others_running = 0;  // fewest other runnable tasks seen at the two ends
};
SchedDelta Difference(const SchedSnapshot& from, const SchedSnapshot& to);

}  // namespace hlox
