// What each codegen choice of a dot ("gemm:<dot>" sites, passes/fusion/codegen_tuning.cc) does to
// its run time: for model-shaped f32 dots, the runtime's own choice (the baseline, GemmTuning{})
// against each knob, at 1 and 2 threads. Paired and interleaved: every round times the baseline
// and the knob once each, in alternating order, and the per-round ratio baseline/knob is kept;
// the table gives the median ratio and its 95% interval over rounds (order statistics of the
// binomial median), so "> 1" means the knob is faster than the default on this host.
//
// Usage: runtime_gemm_tuning_bench [--rounds R] [--threads T,...] [batch m n k [t]]...
// (t: B stored transposed, as a [n, k] weight). With no shapes, a fixed list of transformer and
// MLP shapes. The baseline is the runtime's default code path measured in the same run; it is
// not a floor, only the reference the decision sites are judged against.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/cpu_isa.h"
#include "ir/attributes.h"
#include "ir/shape.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/gemm/dot_general.h"

namespace {

using hlox::DotDimensionNumbers;
using hlox::PrimitiveType;
using hlox::Shape;
using hlox::rt::Buffer;
using hlox::rt::GemmTuning;

struct DotShape {
  int64_t batch, m, n, k;
  bool tb;
};

struct Knob {
  const char* name;
  GemmTuning t;
};

std::vector<Knob> Knobs() {
  std::vector<Knob> k;
  auto add = [&](const char* name, auto set) {
    GemmTuning t;
    set(t);
    k.push_back({name, t});
  };
  add("t1", [](GemmTuning& t) { t.threads = 1; });
  add("rows", [](GemmTuning& t) { t.schedule = GemmTuning::kRows; });
  add("columns", [](GemmTuning& t) { t.schedule = GemmTuning::kColumns; });
  add("mc8", [](GemmTuning& t) { t.mc_panels = 8; });
  add("mc64", [](GemmTuning& t) { t.mc_panels = 64; });
  add("nc4", [](GemmTuning& t) { t.nc_panels = 4; });
  add("nc16", [](GemmTuning& t) { t.nc_panels = 16; });
  add("b_in_l1", [](GemmTuning& t) { t.b_panel_in_l1 = true; });
  add("split_batches", [](GemmTuning& t) { t.batches = GemmTuning::kSplitBatches; });
  add("split_each", [](GemmTuning& t) { t.batches = GemmTuning::kSplitEach; });
  return k;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Operands {
  std::unique_ptr<Buffer> a, b, c;
  DotDimensionNumbers dn;
};

Operands Make(const DotShape& s) {
  Operands o;
  auto shape = [](std::vector<int64_t> dims) { return Shape::WithDefaultLayout(PrimitiveType::kF32, std::move(dims)); };
  std::vector<int64_t> ad = {s.m, s.k}, bd = s.tb ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n},
                       cd = {s.m, s.n};
  if (s.batch > 1) {
    ad.insert(ad.begin(), s.batch);
    bd.insert(bd.begin(), s.batch);
    cd.insert(cd.begin(), s.batch);
    o.dn.lhs_batch = {0};
    o.dn.rhs_batch = {0};
  }
  int64_t off = s.batch > 1 ? 1 : 0;
  o.dn.lhs_contracting = {off + 1};
  o.dn.rhs_contracting = {s.tb ? off + 1 : off};
  o.a = std::make_unique<Buffer>(shape(ad));
  o.b = std::make_unique<Buffer>(shape(bd));
  o.c = std::make_unique<Buffer>(shape(cd));
  uint32_t x = 12345;
  for (Buffer* buf : {o.a.get(), o.b.get()}) {
    float* p = buf->as<float>();
    for (int64_t i = 0; i < buf->shape().ElementCount(); ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = static_cast<float>(x >> 8) / 16777216.0f - 0.5f;
    }
  }
  return o;
}

// Seconds per call of one dot, over enough calls to take about 20 ms.
double TimeCall(Operands& o, hlox::rt::ThreadPool* pool, const GemmTuning& t, int calls) {
  double t0 = Now();
  for (int i = 0; i < calls; ++i) {
    if (!hlox::rt::DotGeneral(*o.a, *o.b, o.dn, *o.c, pool, 1.0, 0.0, t).ok()) {
      std::fprintf(stderr, "dot failed\n");
      std::exit(1);
    }
  }
  return (Now() - t0) / calls;
}

// Median and a 95% interval of the median (binomial order statistics) of sorted values.
void MedianInterval(std::vector<double> v, double* med, double* lo, double* hi) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double half = 0.98 * std::sqrt(static_cast<double>(n));  // 1.96 * sqrt(n) / 2
  size_t l = static_cast<size_t>(std::max(0.0, std::floor(n / 2.0 - half)));
  size_t h = std::min(n - 1, static_cast<size_t>(std::ceil(n / 2.0 + half)));
  *lo = v[l];
  *hi = v[h];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 21;
  std::vector<int> threads = {1, 2};
  std::vector<DotShape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::max(3, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads.clear();
      for (char* p = argv[++i]; *p;) {
        threads.push_back(std::max(1, static_cast<int>(std::strtol(p, &p, 10))));
        if (*p == ',') ++p; else break;
      }
    } else if (i + 3 < argc) {
      DotShape s{std::atoll(argv[i]), std::atoll(argv[i + 1]), std::atoll(argv[i + 2]), std::atoll(argv[i + 3]), false};
      i += 3;
      if (i + 1 < argc && !std::strcmp(argv[i + 1], "t")) { s.tb = true; ++i; }
      if (s.batch < 1 || s.m < 1 || s.n < 1 || s.k < 1) { std::fprintf(stderr, "bad shape\n"); return 2; }
      shapes.push_back(s);
    } else {
      std::fprintf(stderr, "usage: %s [--rounds R] [--threads 1,2] [batch m n k [t]]...\n", argv[0]);
      return 2;
    }
  }
  if (shapes.empty()) {
    shapes = {{1, 128, 768, 768, true},   {1, 128, 3072, 768, true}, {1, 128, 768, 3072, true},
              {12, 128, 128, 64, true},   {12, 128, 64, 128, false}, {1, 512, 512, 512, false},
              {1, 1024, 1024, 1024, false}, {1, 64, 4096, 1024, true}, {1, 2048, 256, 256, false}};
  }
  std::printf("runtime_gemm_tuning_bench: CPU %s, level %s, OPENBLAS_CORETYPE=%s, %d rounds\n",
              hlox::CpuModelName().c_str(), std::string(hlox::IsaName(hlox::ActiveIsa())).c_str(),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset", rounds);
  std::printf("ratio = default time / knob time (> 1: the knob is faster); [95%% interval of the median]\n");
  const std::vector<Knob> knobs = Knobs();
  for (int th : threads) {
    hlox::rt::ThreadPool pool(th);
    for (const DotShape& s : shapes) {
      Operands o = Make(s);
      double once = TimeCall(o, &pool, GemmTuning{}, 1);
      int calls = static_cast<int>(std::clamp(0.02 / std::max(once, 1e-7), 1.0, 10000.0));
      std::printf("\n%d thread(s)  batch %lld  m %lld  n %lld  k %lld%s  default %.1f us (%.1f GFLOP/s)\n", th,
                  static_cast<long long>(s.batch), static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), s.tb ? " (B transposed)" : "", 1e6 * once,
                  2e-9 * s.batch * s.m * s.n * s.k / once);
      for (const Knob& kn : knobs) {
        bool batch_knob = kn.t.batches != GemmTuning::kAutoBatches;
        if (batch_knob && s.batch == 1) continue;
        if ((kn.t.threads == 1 || batch_knob) && th == 1) continue;
        std::vector<double> ratio;
        for (int r = 0; r < rounds; ++r) {
          double base, knob;
          if (r % 2 == 0) {
            base = TimeCall(o, &pool, GemmTuning{}, calls);
            knob = TimeCall(o, &pool, kn.t, calls);
          } else {
            knob = TimeCall(o, &pool, kn.t, calls);
            base = TimeCall(o, &pool, GemmTuning{}, calls);
          }
          ratio.push_back(base / knob);
        }
        double med, lo, hi;
        MedianInterval(ratio, &med, &lo, &hi);
        std::printf("  %-14s %.3f [%.3f, %.3f]%s\n", kn.name, med, lo, hi, lo > 1.0 ? "  faster" : hi < 1.0 ? "  slower" : "");
      }
    }
  }
  return 0;
}
