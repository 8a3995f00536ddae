// Evaluation from Python: one candidate locally (EvaluateCandidate, the record as a dict), or
// many through a broker with the agent client, an embedded fleet, and broker control ops.
// Records cross as dicts built from the record's JSON form (docs/RESULTS.md).
#include <pybind11/stl.h>

#include <chrono>

#include "client/client.h"
#include "client/embedded.h"
#include "cost/evaluate.h"
#include "cost/result_json.h"
#include "ir/printer.h"
#include "protocol/curve.h"
#include "python/src/bindings.h"

namespace hlox::py {

namespace {

using Decisions = std::map<std::string, std::vector<int32_t>>;

pyb::object RecordToDict(const ResultRecord& record) {
  return pyb::module_::import("json").attr("loads")(ResultToJsonString(record));
}

pyb::object Evaluate(const ModulePtr& module, const std::string& pipeline, const Decisions& decisions,
                     uint64_t seed, int threads, bool validate, bool measure, int max_samples,
                     double time_cap_seconds) {
  EvalOptions options;
  options.seed = seed;
  options.threads = threads;
  options.validate = validate;
  options.measure = measure;
  options.protocol.max_samples = std::max(max_samples, 1);
  options.protocol.min_samples = std::min(options.protocol.min_samples, options.protocol.max_samples);
  options.protocol.time_cap_seconds = time_cap_seconds;
  ResultRecord record;
  {
    pyb::gil_scoped_release release;
    record = EvaluateCandidate(*module, pipeline, PipelineDecisions(decisions.begin(), decisions.end()),
                               options);
  }
  return RecordToDict(record);
}

// Owns an client::Client; results come back as {"job_id", "attempts", "cached", "record"}.
class PyClient {
 public:
  explicit PyClient(std::unique_ptr<client::Client> client) : client_(std::move(client)) {}

  std::string Submit(const ModulePtr& module, const std::string& pipeline, const Decisions& decisions,
                     const std::string& campaign, const std::string& id, bool use_cache,
                     uint32_t run_timeout_ms, const std::string& hardware_class, uint32_t queue_timeout_ms,
                     const std::string& kind, const std::string& baseline_pipeline,
                     const Decisions& baseline_decisions, uint64_t seed,
                     const std::map<std::string, double>& timing) {
    client::JobSpec job;
    job.kind = kind;
    // A paired job's keys (the wrapper fills in every one; the broker checks their ranges).
    job.paired.baseline_pipeline = baseline_pipeline;
    job.paired.baseline_decisions = PipelineDecisions(baseline_decisions.begin(), baseline_decisions.end());
    job.paired.seed = seed;
    auto get = [&](const char* key, double fallback) {
      auto it = timing.find(key);
      return it == timing.end() ? fallback : it->second;
    };
    TimingProtocol& t = job.paired.protocol;
    t.warmups = static_cast<int>(get("warmups", t.warmups));
    t.min_samples = static_cast<int>(get("min_rounds", t.min_samples));
    t.max_samples = static_cast<int>(get("max_rounds", t.max_samples));
    t.target_rel_error = get("target_rel_error", t.target_rel_error);
    t.time_cap_seconds = get("time_cap_ms", t.time_cap_seconds * 1e3) / 1e3;
    t.min_sample_seconds = get("min_sample_us", t.min_sample_seconds * 1e6) / 1e6;
    t.paired_instances = static_cast<int>(get("instances", t.paired_instances));
    job.id = id;
    job.campaign = campaign;
    job.module_text = TextOf(module);
    job.pipeline = pipeline;
    job.decisions = PipelineDecisions(decisions.begin(), decisions.end());
    job.use_cache = use_cache;
    job.run_timeout_ms = run_timeout_ms;
    job.hardware_class = hardware_class;
    job.queue_timeout_ms = queue_timeout_ms;
    absl::StatusOr<std::string> out;
    {
      pyb::gil_scoped_release release;
      out = client_->Submit(std::move(job));
    }
    return Unwrap(std::move(out));
  }

  pyb::object Next(int timeout_ms) {
    std::optional<client::JobResult> r;
    {
      pyb::gil_scoped_release release;
      r = client_->Next(std::chrono::milliseconds(timeout_ms));
    }
    return r ? ToDict(*r) : pyb::none();
  }

  pyb::list Poll() {
    pyb::list out;
    for (const auto& r : client_->Poll()) out.append(ToDict(r));
    return out;
  }

  size_t Unfinished() const { return client_->unfinished(); }

 private:
  // Module text printed once per module object (the client sends it once per broker anyway).
  std::shared_ptr<const std::string> TextOf(const ModulePtr& module) {
    if (last_module_ != module.get() || !last_text_) {
      last_text_ = std::make_shared<const std::string>(PrintModule(*module));
      last_module_ = module.get();
      last_module_ref_ = module;
    }
    return last_text_;
  }
  static pyb::object ToDict(const client::JobResult& r) {
    pyb::dict d;
    d["job_id"] = r.job_id;
    d["attempts"] = r.attempts;
    d["cached"] = r.cached;
    d["record"] = RecordToDict(r.record);
    return d;
  }

  std::unique_ptr<client::Client> client_;
  const Module* last_module_ = nullptr;
  ModulePtr last_module_ref_;
  std::shared_ptr<const std::string> last_text_;
};

class PyFleet {
 public:
  explicit PyFleet(client::EmbeddedFleet fleet) : fleet_(std::move(fleet)) {}
  std::string Address() const { return fleet_.address; }
  std::string HardwareClass() const { return fleet_.hardware_class; }
  std::string ControlAddress() const {
    return fleet_.handle ? fleet_.handle->control_address() : std::string();
  }
  std::vector<int> WorkerPids() const {
    return fleet_.handle ? fleet_.handle->worker_pids() : std::vector<int>{};
  }
  void Close() {
    pyb::gil_scoped_release release;
    fleet_.handle.reset();
  }

 private:
  client::EmbeddedFleet fleet_;
};

}  // namespace

void BindEval(pyb::module_& m) {
  m.def("evaluate", &Evaluate, pyb::arg("module"), pyb::arg("pipeline") = "default",
        pyb::arg("decisions") = Decisions{}, pyb::arg("seed") = 0, pyb::arg("threads") = 1,
        pyb::arg("validate") = true, pyb::arg("measure") = true, pyb::arg("max_samples") = 50,
        pyb::arg("time_cap_seconds") = 2.0,
        "Evaluates one candidate in this process; never raises for a bad candidate: the "
        "record's 'status' says what happened.");

  // The raw native client (milliseconds); hlox.Client (python/hlox/native_client.py) wraps it
  // with the API the pure-Python client shares.
  pyb::class_<PyClient>(m, "NativeClient", "Agent client of an hlox broker (C++ client::Client).")
      .def(pyb::init([](const std::string& address, const std::string& identity, const std::string& curve_key,
                        const std::string& broker_key) {
             client::ClientOptions options;
             options.identity = identity;
             options.curve = Unwrap(proto::LoadCurveClientKeys(curve_key, broker_key));
             return std::make_unique<PyClient>(Unwrap(client::Client::Connect(address, options)));
           }),
           pyb::arg("address"), pyb::arg("identity") = "", pyb::arg("curve_key") = "",
           pyb::arg("broker_key") = "",
           "curve_key: own CURVE secret key file, broker_key: the broker's .pub (both or neither).")
      .def("submit", &PyClient::Submit, pyb::arg("module"), pyb::arg("pipeline") = "default",
           pyb::arg("decisions") = Decisions{}, pyb::arg("campaign") = "", pyb::arg("id") = "",
           pyb::arg("use_cache") = true, pyb::arg("run_timeout_ms") = 0, pyb::arg("hardware_class") = "",
           pyb::arg("queue_timeout_ms") = 0, pyb::arg("kind") = "evaluate",
           pyb::arg("baseline_pipeline") = "", pyb::arg("baseline_decisions") = Decisions{},
           pyb::arg("seed") = 0, pyb::arg("timing") = std::map<std::string, double>{},
           "Queues a job (kind \"evaluate\", \"sites\" or \"paired\", whose keys follow kind); "
           "returns its id. timing: a paired job's protocol keys in the wire's units.")
      .def("next", &PyClient::Next, pyb::arg("timeout_ms") = 1000,
           "The next result dict, or None after timeout_ms.")
      .def("poll", &PyClient::Poll, "Every result available now.")
      .def_property_readonly("unfinished", &PyClient::Unfinished);

  pyb::class_<PyFleet>(m, "EmbeddedFleet", "In-process broker plus local worker processes.")
      .def(pyb::init([](int workers, const std::string& hlox_binary, int threads) {
             client::EmbeddedOptions options;
             options.hlox_binary = hlox_binary;
             options.threads = threads;
             return std::make_unique<PyFleet>(Unwrap(client::StartEmbeddedFleet(workers, options)));
           }),
           pyb::arg("workers"), pyb::arg("hlox_binary"), pyb::arg("threads") = 1)
      .def_property_readonly("address", &PyFleet::Address)
      .def_property_readonly("hardware_class", &PyFleet::HardwareClass,
                             "The class its workers register under, ISA level included.")
      .def_property_readonly("control_address", &PyFleet::ControlAddress)
      .def_property_readonly("worker_pids", &PyFleet::WorkerPids)
      .def("close", &PyFleet::Close, "Stops the broker and the workers.");

  m.def("control", [](const std::string& address, const std::string& op, const std::string& target,
                      int timeout_ms, const std::string& curve_key, const std::string& broker_key) {
        proto::CurveClientKeys curve = Unwrap(proto::LoadCurveClientKeys(curve_key, broker_key));
        absl::StatusOr<std::string> out;
        {
          pyb::gil_scoped_release release;
          out = client::ControlRequest(address, op, target, std::chrono::milliseconds(timeout_ms), curve);
        }
        // No answer and a refusal raise what the pure-Python client raises for them.
        if (out.status().code() == absl::StatusCode::kDeadlineExceeded) {
          PyErr_SetString(PyExc_TimeoutError, std::string(out.status().message()).c_str());
          throw pyb::error_already_set();
        }
        if (out.status().code() == absl::StatusCode::kFailedPrecondition ||
            out.status().code() == absl::StatusCode::kUnavailable) {
          throw std::runtime_error(std::string(out.status().message()));
        }
        return Unwrap(std::move(out));
      }, pyb::arg("control_address"), pyb::arg("op"), pyb::arg("target") = "",
      pyb::arg("timeout_ms") = 3000, pyb::arg("curve_key") = "", pyb::arg("broker_key") = "",
      "status/drain/cancel/shutdown; returns the reply text.");
}

}  // namespace hlox::py
