// hlox run FILE: parses and verifies a module, runs it on seeded inputs (or .npy inputs) with
// the CPU runtime, and prints per output leaf its shape, dtype and checksum (FNV-1a 64 of the
// bytes, and the sum of finite values), the time per run (min and median over --repeat) and
// the peak live buffer bytes. --save-outputs writes the leaves as 0.npy, 1.npy, ...; --profile
// adds the time per opcode and the 15 slowest entry instructions of the last run;
// --check-finite reports the first entry instruction (execution order) whose value holds NaN/Inf.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "absl/strings/str_format.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "nlohmann/json.hpp"
#include "runtime/core/executor.h"
#include "runtime/core/finite.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/npy.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

using rt::CountNonFinite;
using rt::NonFinite;

struct RunOptions {
  std::string file;
  int threads = 1;
  uint64_t seed = 0;
  int repeat = 1;
  std::string inputs_dir;
  std::string save_dir;
  bool json = false;
  bool profile = false;
  int profile_top = 15;
  bool check_finite = false;
};

uint64_t Fnv1a(const uint8_t* p, int64_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Sum of the finite values of a leaf (as double), for a human-readable checksum. Read through a
// Literal of at most 64K elements at a time (its per-type accessors), so a multi-GB output is
// not copied whole.
double FiniteSum(const rt::Buffer& b) {
  const PrimitiveType t = b.shape().element_type();
  const int64_t n = b.shape().ElementCount(), esize = PrimitiveByteSize(t);
  if (n * esize != b.byte_size()) return 0;
  constexpr int64_t kChunk = 1 << 16;
  double s = 0;
  for (int64_t lo = 0; lo < n; lo += kChunk) {
    const int64_t m = std::min(kChunk, n - lo);
    Literal lit(Shape(t, {m}));
    std::memcpy(lit.data(), b.data() + lo * esize, m * esize);
    for (int64_t i = 0; i < m; ++i) {
      double v = IsComplex(t) ? lit.GetAsComplex(i).real() : lit.GetAsDouble(i);
      if (std::isfinite(v)) s += v;
    }
  }
  return s;
}

bool MovesElements(Opcode op) {
  switch (op) {
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kBroadcast: case Opcode::kCopy: case Opcode::kTranspose: case Opcode::kSlice:
    case Opcode::kConcatenate: case Opcode::kPad: case Opcode::kReverse: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kSelect: case Opcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

// Watches the entry values of a run (RunStats::on_value) and keeps the first non-finite one,
// with the finiteness of its operands, so the report says whether it made NaN/Inf from finite
// values or passed them on. Written constants (e.g. the -inf of a max reduction) are not
// reported: they are non-finite on purpose; nor are ops that only move a non-finite operand's
// elements (tuple, reshape, broadcast, ...), which would otherwise blame the root tuple.
struct FiniteWatch {
  std::map<const Instruction*, NonFinite> seen;
  const Instruction* first = nullptr;
  NonFinite first_count;
  int64_t index = 0, first_index = -1;

  void Observe(const Instruction& instr, const rt::Value& v) {
    ++index;
    if (first != nullptr) return;
    NonFinite c = CountNonFinite(v);
    seen[&instr] = c;
    const bool written = instr.opcode() == Opcode::kConstant && instr.has_literal() && !instr.literal().elided();
    bool moved = false;  // a data-movement op with a non-finite operand
    if (MovesElements(instr.opcode())) {
      for (const Instruction* op : instr.operands()) {
        auto it = seen.find(op);
        moved = moved || (it != seen.end() && it->second.any());
      }
    }
    if (c.any() && !written && !moved) {
      first = &instr;
      first_count = c;
      first_index = index - 1;
    }
  }

  nlohmann::json Json() const {
    nlohmann::json j;
    if (first == nullptr) return j;  // null: every entry value was finite
    j["instruction"] = first->name();
    j["opcode"] = std::string(OpcodeName(first->opcode()));
    j["shape"] = first->shape().ToString(false);
    j["step"] = first_index;
    j["nan"] = first_count.nan;
    j["inf"] = first_count.inf;
    j["max_abs"] = first_count.max_abs;
    j["operands"] = nlohmann::json::array();
    for (const Instruction* op : first->operands()) {
      auto it = seen.find(op);
      bool finite = it == seen.end() || !it->second.any();
      j["operands"].push_back(
          {{"name", op->name()}, {"finite", finite}, {"max_abs", it == seen.end() ? 0.0 : it->second.max_abs}});
    }
    return j;
  }

  std::string Text() const {
    if (first == nullptr) return "check-finite: no entry instruction made a NaN/Inf (written constants and moves of them excepted)\n";
    std::string s = absl::StrFormat("check-finite: first non-finite value at step %d: %s = %s %s (%d NaN, %d Inf)\n",
                                    first_index, first->name(), std::string(OpcodeName(first->opcode())),
                                    first->shape().ToString(false), first_count.nan, first_count.inf);
    for (const Instruction* op : first->operands()) {
      auto it = seen.find(op);
      bool finite = it == seen.end() || !it->second.any();
      s += absl::StrFormat("  operand %s: %s, max |x| %g\n", op->name(), finite ? "finite" : "non-finite",
                           it == seen.end() ? 0.0 : it->second.max_abs);
    }
    return s;
  }
};

// Leaf shapes of the entry parameters, in flattened order.
void LeafShapes(const Shape& s, std::vector<Shape>* out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) LeafShapes(e, out);
  } else {
    out->push_back(s);
  }
}

absl::StatusOr<rt::Value> BuildFromLeaves(const Shape& s, const std::vector<rt::Value>& leaves, size_t* next) {
  if (s.IsTuple()) {
    std::vector<rt::Value> elems;
    for (const Shape& e : s.tuple_shapes()) {
      auto v = BuildFromLeaves(e, leaves, next);
      if (!v.ok()) return v.status();
      elems.push_back(*std::move(v));
    }
    return rt::Value::Tuple(std::move(elems));
  }
  if (!s.IsArray()) return rt::Value::Token();
  return leaves.at((*next)++);
}

absl::StatusOr<std::vector<rt::Value>> ReadInputs(const Module& m, const std::string& dir) {
  std::vector<rt::Value> args;
  size_t file_index = 0;
  for (const Instruction* p : m.entry()->parameters()) {
    std::vector<Shape> leaves;
    LeafShapes(p->shape(), &leaves);
    std::vector<rt::Value> values;
    for (const Shape& leaf : leaves) {
      if (!leaf.IsArray()) {
        values.push_back(rt::Value::Token());
        continue;
      }
      std::string path = (std::filesystem::path(dir) / absl::StrFormat("%d.npy", file_index++)).string();
      auto v = rt::ReadNpy(path, leaf);
      if (!v.ok()) return v.status();
      values.push_back(*std::move(v));
    }
    size_t next = 0;
    std::vector<rt::Value> arrays;
    for (auto& v : values) if (v.is_array()) arrays.push_back(v);
    auto built = BuildFromLeaves(p->shape(), arrays, &next);
    if (!built.ok()) return built.status();
    args.push_back(*std::move(built));
  }
  return args;
}

int RunMain(const RunOptions& o) {
  auto fail = [](const absl::Status& s) {
    std::cerr << "hlox run: " << s.message() << "\n";
    return 1;
  };
  auto module = ParseModuleFile(o.file);
  if (!module.ok()) return fail(module.status());
  if (absl::Status v = VerifyModule(**module); !v.ok()) return fail(v);
  rt::ExecOptions eo;
  eo.threads = std::max(1, o.threads);
  eo.seed = o.seed;
  auto exec = rt::Executor::Create(**module, eo);
  if (!exec.ok()) return fail(exec.status());
  std::vector<rt::Value> args;
  if (!o.inputs_dir.empty()) {
    auto in = ReadInputs(**module, o.inputs_dir);
    if (!in.ok()) return fail(in.status());
    args = *std::move(in);
  } else {
    args = rt::MakeSeededInputs(**module, o.seed);
  }
  std::vector<double> times;
  rt::Value result;
  rt::RunStats stats;
  stats.profile = o.profile;
  FiniteWatch watch;
  if (o.check_finite) {
    stats.on_value = [&watch](const Instruction& instr, const rt::Value& v) { watch.Observe(instr, v); };
  }
  for (int r = 0; r < std::max(1, o.repeat); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    watch = FiniteWatch();
    auto out = (*exec)->Run(args, &stats);
    auto t1 = std::chrono::steady_clock::now();
    if (!out.ok()) return fail(out.status());
    result = *std::move(out);
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  double tmin = sorted.front(), tmed = sorted[sorted.size() / 2];
  std::vector<rt::BufferPtr> leaves;
  result.Flatten(&leaves);
  if (!o.save_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.save_dir, ec);
    for (size_t i = 0; i < leaves.size(); ++i) {
      std::string path = (std::filesystem::path(o.save_dir) / absl::StrFormat("%d.npy", i)).string();
      if (absl::Status s = rt::WriteNpy(path, *leaves[i]); !s.ok()) return fail(s);
    }
  }
  nlohmann::json j;
  j["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const rt::Buffer& b = *leaves[i];
    std::string checksum = absl::StrFormat("%016x", Fnv1a(b.data(), b.byte_size()));
    double sum = FiniteSum(b);
    if (o.json) {
      j["outputs"].push_back({{"shape", b.shape().ToString(false)},
                              {"dtype", std::string(PrimitiveTypeName(b.shape().element_type()))},
                              {"checksum", checksum},
                              {"finite_sum", sum}});
    } else {
      std::cout << absl::StrFormat("output %d: %s checksum=%s sum=%.9g\n", i, b.shape().ToString(false), checksum, sum);
    }
  }
  if (o.check_finite) {
    if (o.json) {
      j["first_non_finite"] = watch.Json();
    } else {
      std::cout << watch.Text();
    }
  }
  if (o.profile) {
    // Per opcode and the slowest instructions of the last run.
    std::map<std::string, std::pair<double, int>> by_op;
    double total = 0;
    for (const rt::InstrTime& t : stats.profile_times) {
      auto& e = by_op[std::string(OpcodeName(t.instr->opcode()))];
      e.first += t.seconds;
      ++e.second;
      total += t.seconds;
    }
    std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    std::vector<rt::InstrTime> top = stats.profile_times;
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
    if (top.size() > size_t(std::max(o.profile_top, 0))) top.resize(size_t(std::max(o.profile_top, 0)));
    nlohmann::json jp;
    for (const auto& [name, e] : ops) jp["by_opcode"].push_back({{"opcode", name}, {"seconds", e.first}, {"count", e.second}});
    for (const rt::InstrTime& t : top) {
      jp["top"].push_back({{"instruction", t.instr->name()}, {"opcode", std::string(OpcodeName(t.instr->opcode()))},
                           {"shape", t.instr->shape().ToString(false)}, {"seconds", t.seconds}});
    }
    if (o.json) {
      j["profile"] = jp;
    } else {
      std::cout << absl::StrFormat("profile (last run, %.6f s in entry kernels):\n", total);
      for (const auto& [name, e] : ops) {
        std::cout << absl::StrFormat("  %-24s %10.6f s %5.1f%% %6d instr\n", name, e.first,
                                     total > 0 ? 100 * e.first / total : 0.0, e.second);
      }
      std::cout << "  slowest instructions:\n";
      for (const rt::InstrTime& t : top) {
        std::cout << absl::StrFormat("  %10.6f s  %-20s %s %s\n", t.seconds, std::string(OpcodeName(t.instr->opcode())),
                                     t.instr->name(), t.instr->shape().ToString(false));
      }
    }
  }
  if (o.json) {
    j["time_per_run_s"] = tmed;
    j["time_min_s"] = tmin;
    j["repeats"] = times.size();
    j["threads"] = eo.threads;
    j["seed"] = eo.seed;
    j["peak_bytes"] = stats.peak_bytes;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << absl::StrFormat("time per run: min %.6f s, median %.6f s over %d run(s), %d thread(s)\n", tmin, tmed,
                                 times.size(), eo.threads);
    std::cout << absl::StrFormat("peak memory: %d bytes\n", stats.peak_bytes);
  }
  return 0;
}

}  // namespace

void RegisterRun(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a module on the CPU runtime and print output checksums");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("file", o->file, "HLO text file")->required();
  cmd->add_option("--threads", o->threads, "runtime threads (default 1)");
  cmd->add_option("--seed", o->seed, "seed for inputs, elided constants and rng ops (default 0)");
  cmd->add_option("--repeat", o->repeat, "number of timed runs (default 1)");
  cmd->add_option("--inputs", o->inputs_dir, "read parameters from DIR/0.npy, 1.npy, ... (tuples flattened)");
  cmd->add_option("--save-outputs", o->save_dir, "write output leaves to DIR/0.npy, 1.npy, ...");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_flag("--profile", o->profile, "print time per opcode and the slowest instructions (last run)");
  cmd->add_option("--profile-top", o->profile_top, "how many of the slowest instructions --profile lists (default 15)");
  cmd->add_flag("--check-finite", o->check_finite,
                "report the first entry instruction (execution order) whose value has NaN/Inf");
  cmd->callback([o] { ExitCode() = RunMain(*o); });
}

}  // namespace hlox::cli
