// The embedded fleet: broker thread plus forked-and-exec'd worker processes; see embedded.h.
#include "client/embedded.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/cpu_isa.h"
#include "common/logging.h"
#include "protocol/hardware_class.h"

namespace hlox::client {
namespace {

// Live fleets of this process: ipc address -> (inproc endpoint, the broker's context).
std::mutex registry_mu;
std::map<std::string, std::pair<std::string, std::weak_ptr<zmq::context_t>>>& Registry() {
  static auto* r = new std::map<std::string, std::pair<std::string, std::weak_ptr<zmq::context_t>>>;
  return *r;
}

class Fleet : public EmbeddedFleetHandle {
 public:
  ~Fleet() override {
    {
      std::lock_guard<std::mutex> lock(registry_mu);
      Registry().erase(address_);
    }
    // The broker stops first: workers it could still reach as they exit would be reported lost.
    if (broker_) broker_->Stop();
    if (thread_.joinable()) thread_.join();
    for (int pid : pids_) ::kill(pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (int pid : pids_) {
      int status;
      while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    broker_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  const std::string& address() const override { return address_; }
  const std::string& control_address() const override { return control_; }
  std::vector<int> worker_pids() const override { return pids_; }

  std::string dir_, address_, control_;
  std::unique_ptr<broker::Broker> broker_;
  std::thread thread_;
  std::vector<int> pids_;
};

}  // namespace

absl::StatusOr<EmbeddedFleet> StartEmbeddedFleet(int workers, const EmbeddedOptions& options) {
  // Workers get the level explicitly: this process may have set it (SetActiveIsa) without
  // HLOX_ISA, which is all they would inherit.
  const IsaLevel level = ActiveIsa();
  const std::string isa(IsaName(level));
  absl::StatusOr<std::string> hardware_class =
      proto::EffectiveHardwareClass(options.hardware_class, level);
  if (!hardware_class.ok()) return hardware_class.status();
  auto fleet = std::make_unique<Fleet>();
  char tmpl[] = "/tmp/hlox-fleet-XXXXXX";
  if (!::mkdtemp(tmpl)) return absl::InternalError("mkdtemp failed");
  fleet->dir_ = tmpl;
  fleet->address_ = absl::StrCat("ipc://", fleet->dir_, "/broker");
  broker::BrokerOptions bo;
  bo.bind = fleet->address_;
  bo.db_path = options.db_path;
  bo.context = std::make_shared<zmq::context_t>(1);
  bo.inproc_bind = absl::StrCat("inproc://", fleet->dir_.substr(fleet->dir_.rfind('/') + 1));
  auto b = broker::Broker::Create(bo);
  if (!b.ok()) return b.status();
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    Registry()[fleet->address_] = {bo.inproc_bind, bo.context};
  }
  fleet->broker_ = std::move(*b);
  fleet->control_ = fleet->broker_->control_address();
  broker::Broker* raw = fleet->broker_.get();
  fleet->thread_ = std::thread([raw] {
    absl::Status st = raw->Run();
    if (!st.ok()) log::agent().error("embedded broker: {}", std::string(st.message()));
  });
  std::string exe = options.hlox_binary;
  if (exe.empty()) {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return absl::InternalError("cannot read /proc/self/exe");
    exe.assign(buf, static_cast<size_t>(n));
  }
  for (int i = 0; i < workers; ++i) {
    std::vector<std::string> argv = {exe, "worker", "--broker", fleet->address_, "--threads",
                                     std::to_string(options.threads), "--class",
                                     *hardware_class, "--isa", isa, "--id",
                                     absl::StrCat("local-", ::getpid(), "-", i)};
    argv.insert(argv.end(), options.worker_args.begin(), options.worker_args.end());
    pid_t pid = ::fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // local workers never outlive their agent
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    fleet->pids_.push_back(pid);
  }
  EmbeddedFleet out;
  out.address = fleet->address_;
  out.hardware_class = *hardware_class;
  out.handle = std::move(fleet);
  return out;
}

LocalEndpoint LocalEndpointFor(const std::string& address) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto it = Registry().find(address);
  if (it == Registry().end()) return {};
  std::shared_ptr<zmq::context_t> ctx = it->second.second.lock();
  if (!ctx) return {};
  return {it->second.first, std::move(ctx)};
}

}  // namespace hlox::client
