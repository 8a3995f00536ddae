// The child's hard memory limit and the job's timeout; see job_limits.h.
#include "worker/job_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>

#include "protocol/protocol.h"

namespace hlox::worker {
namespace {

// VmData of this process (private writable memory, what RLIMIT_DATA counts), or -1. Read with
// stdio into a stack buffer: no allocation before the limit is set.
int64_t DataBytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kb = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmData:", 7) == 0) {
      kb = std::atoll(line + 7);
      break;
    }
  }
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

// An uncaught exception in the child: an allocation failure is the job's memory limit, anything
// else is a crash (abort, as the default handler does).
[[noreturn]] void OnTerminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      ::_exit(kOutOfMemoryExit);
    } catch (...) {
    }
  }
  std::abort();
}

}  // namespace

bool ApplyChildMemoryLimit(int64_t budget_bytes, int threads) {
  if (budget_bytes <= 0) return true;
  std::set_terminate(OnTerminate);
  const int64_t now = DataBytes();
  if (now < 0) return false;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
  const int64_t margin = kChildMarginBytes + std::max(1, threads) * kChildMarginPerThreadBytes;
  const int64_t limit = std::min(kMax, now + std::min(kMax, budget_bytes) + margin);
  rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  return ::setrlimit(RLIMIT_DATA, &rl) == 0;
}

uint32_t JobTimeoutMs(uint32_t job_ms, uint32_t budget_ms) {
  const uint32_t ms = job_ms ? job_ms : proto::kDefaultRunTimeoutMs;
  return budget_ms ? std::min(ms, budget_ms) : ms;
}

}  // namespace hlox::worker
