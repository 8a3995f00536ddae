// Worker supervision: run the worker as a child process and restart it when it dies abnormally
// (a crash in the worker itself, e.g. in-process evaluation with --no-fork). SIGTERM/SIGINT are
// forwarded to the child and end supervision.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "common/logging.h"
#include "worker/worker.h"

namespace hlox::worker {
namespace {

volatile sig_atomic_t g_stop = 0;
volatile pid_t g_child = 0;

void OnSignal(int sig) {
  g_stop = 1;
  if (g_child > 0) ::kill(g_child, sig);
}

}  // namespace

int RunSupervised(const std::vector<std::string>& argv) {
  if (argv.empty()) return 2;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  int restarts = 0;
  while (!g_stop) {
    pid_t pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    g_child = pid;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitRefused) {
      log::worker().error("worker process {} was refused by the broker (protocol); not restarting", pid);
      return kExitRefused;
    }
    if (g_stop) break;
    ++restarts;
    log::worker().warn("worker process {} died ({} {}); restart #{}", pid,
                       WIFSIGNALED(status) ? "signal" : "exit",
                       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), restarts);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 100 * restarts)));
  }
  return 0;
}

}  // namespace hlox::worker
