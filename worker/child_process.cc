// Fork, pipe, deadline and reap; see child_process.h.
#include "worker/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <new>

#include "worker/job_limits.h"

namespace hlox::worker {
namespace {

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool ChildOutput::Clean() const {
  return started && !timed_out && !too_big && WIFEXITED(wait_status) &&
         WEXITSTATUS(wait_status) == 0;
}

bool ChildOutput::OutOfMemory() const {
  return started && !timed_out && WIFEXITED(wait_status) &&
         WEXITSTATUS(wait_status) == kOutOfMemoryExit;
}

ChildOutput RunInChild(const std::function<std::string()>& work, uint32_t timeout_ms,
                       size_t max_bytes, int64_t memory_budget_bytes, int threads) {
  ChildOutput out;
  auto t0 = std::chrono::steady_clock::now();
  int fds[2];
  if (::pipe(fds) != 0) {
    out.error = "pipe failed";
    return out;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    out.error = "fork failed";
    return out;
  }
  if (pid == 0) {  // child: compute, write, leave without running any destructor
    ::close(fds[0]);
    ApplyChildMemoryLimit(memory_budget_bytes, threads);
    std::string bytes;
    try {
      bytes = work();
    } catch (const std::bad_alloc&) {
      ::_exit(kOutOfMemoryExit);
    }
    ::_exit(WriteAll(fds[1], bytes) ? 0 : 3);
  }
  out.started = true;
  ::close(fds[1]);
  char buf[65536];
  auto deadline = t0 + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) { out.timed_out = true; break; }
    pollfd p{fds[0], POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child finished or died
    out.bytes.append(buf, static_cast<size_t>(n));
    if (out.bytes.size() > max_bytes) { out.too_big = true; break; }
  }
  ::close(fds[0]);
  if (out.timed_out || out.too_big) ::kill(pid, SIGKILL);
  while (::waitpid(pid, &out.wait_status, 0) < 0 && errno == EINTR) {}
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hlox::worker
