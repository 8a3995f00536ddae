// Bench: fusions whose cost is in how they walk memory, not in their math.
//   * head_split: the transformer encoder's "bias add -> reshape -> slice -> reshape ->
//     transpose (moves the minor dim)" fusion, f32 [1024,1536] -> [64,64,128];
//   * transpose_add: x^T + y over f32 [2048,2048] (and [2049,2049]: no power-of-two row stride);
//   * bf16_bias_add and bf16_log_softmax: two bf16 fusions of gh_bert_fwd_bwd_bf16 over
//     [128,30522] (a bias add, and x - m - log(s) with row vectors m and s), and the bias add
//     in f16 (f16_bias_add).
// Each case runs, interleaved and best of `repeats`, on 1 and 2 threads: the fused program as
// Run picks its path ("default": tiled walks for transposing outputs, the register path for
// elementwise math), the same with tiling off ("untiled": the register path where it applies,
// else the block loop walking rows), the block loop walking rows ("row order"; ratios are
// variant / default; these call FusedProgram::Run, whose output is a fresh buffer), the
// fused module and the same computation unfused through the executor (buffers reused), and a
// tiles of edge 32 and 16 instead of 64 (the codegen decision's tile32 / tile16), and a
// copy floor (memcpy of the output's bytes from an input-sized
// buffer, i.e. the traffic of reading and writing the output once).
// Usage: fusion_layout_bench [repeats] [case,...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"
#include "runtime/core/thread_pool.h"
#include "runtime/fused/program.h"

namespace hlox {
namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  const char* params;  // the parameter lines, shared by the fused body and the entry
  const char* body;    // the fused computation's other lines (ROOT last)
  const char* root_shape;
};

const Case kCases[] = {
    {"head_split",
     "  x = f32[1024,1536] parameter(0)\n  b = f32[1536] parameter(1)\n",
     "  bb = f32[1024,1536] broadcast(b), dimensions={1}\n"
     "  a = f32[1024,1536] add(bb, x)\n"
     "  r = f32[8,128,1536] reshape(a)\n"
     "  s = f32[8,128,512] slice(r), slice={[0:8], [0:128], [512:1024]}\n"
     "  h = f32[8,128,8,64] reshape(s)\n"
     "  t = f32[8,8,64,128] transpose(h), dimensions={0,2,3,1}\n"
     "  ROOT o = f32[64,64,128] reshape(t)\n",
     "f32[64,64,128]"},
    {"transpose_add",
     "  x = f32[2048,2048] parameter(0)\n  y = f32[2048,2048] parameter(1)\n",
     "  t = f32[2048,2048] transpose(x), dimensions={1,0}\n"
     "  ROOT o = f32[2048,2048] add(t, y)\n",
     "f32[2048,2048]"},
    {"transpose_add_2049",  // the same off a power of two (cache-set conflicts of 2048's rows)
     "  x = f32[2049,2049] parameter(0)\n  y = f32[2049,2049] parameter(1)\n",
     "  t = f32[2049,2049] transpose(x), dimensions={1,0}\n"
     "  ROOT o = f32[2049,2049] add(t, y)\n",
     "f32[2049,2049]"},
    {"bf16_bias_add",
     "  b = bf16[30522] parameter(0)\n  x = bf16[128,30522] parameter(1)\n",
     "  r = bf16[1,128,30522] reshape(x)\n"
     "  bb = bf16[1,128,30522] broadcast(b), dimensions={2}\n"
     "  ROOT o = bf16[1,128,30522] add(r, bb)\n",
     "bf16[1,128,30522]"},
    {"f16_bias_add",  // the same in f16 (register path since f16 joined it; before: the block loop)
     "  b = f16[30522] parameter(0)\n  x = f16[128,30522] parameter(1)\n",
     "  r = f16[1,128,30522] reshape(x)\n"
     "  bb = f16[1,128,30522] broadcast(b), dimensions={2}\n"
     "  ROOT o = f16[1,128,30522] add(r, bb)\n",
     "f16[1,128,30522]"},
    {"bf16_log_softmax",
     "  s = bf16[128] parameter(0)\n  m = bf16[128] parameter(1)\n  x = bf16[1,128,30522] parameter(2)\n",
     "  r = bf16[128,30522] reshape(x)\n"
     "  bm = bf16[128,30522] broadcast(m), dimensions={0}\n"
     "  d = bf16[128,30522] subtract(r, bm)\n"
     "  l = bf16[128] log(s)\n"
     "  bl = bf16[128,30522] broadcast(l), dimensions={0}\n"
     "  ROOT o = bf16[128,30522] subtract(d, bl)\n",
     "bf16[128,30522]"},
};

struct Best {
  double s = 1e30;
  template <typename F>
  void Time(F&& f) {
    auto t0 = Clock::now();
    f();
    s = std::min(s, std::chrono::duration<double>(Clock::now() - t0).count());
  }
};

int RunCase(const Case& c, int reps) {
  std::string params = c.params;
  std::string args;
  for (absl::string_view line : absl::StrSplit(params, '\n', absl::SkipEmpty())) {
    std::string l(line);
    const size_t eq = l.find('=');
    std::string name = l.substr(2, eq - 3);
    args += (args.empty() ? "" : ", ") + name;
  }
  const std::string fused_text = std::string("HloModule f\nfused {\n") + params + c.body +
                                 "}\nENTRY main {\n" + params + "  ROOT f = " + c.root_shape +
                                 " fusion(" + args + "), kind=kLoop, calls=fused\n}\n";
  const std::string unfused_text = std::string("HloModule u\nENTRY main {\n") + params + c.body + "}\n";
  auto fm = ParseModule(fused_text);
  auto um = ParseModule(unfused_text);
  if (!fm.ok() || !um.ok()) {
    std::fprintf(stderr, "%s: parse error %s\n", c.name,
                 std::string((fm.ok() ? um.status() : fm.status()).message()).c_str());
    return 1;
  }
  auto prog = rt::FusedProgram::Compile(*(*fm)->FindComputation("fused"), 1);
  if (!prog.ok()) {
    std::fprintf(stderr, "%s: %s\n", c.name, std::string(prog.status().message()).c_str());
    return 1;
  }
  std::vector<rt::Value> in = rt::MakeSeededInputs(**um, 1);
  std::vector<const rt::Value*> ptrs;
  int64_t in_bytes = 0;
  for (const rt::Value& v : in) {
    ptrs.push_back(&v);
    in_bytes = std::max<int64_t>(in_bytes, v.array->byte_size());
  }
  for (int threads : {1, 2}) {
    rt::ThreadPool pool(threads);
    auto exec = rt::Executor::Create(**um, rt::ExecOptions{threads, 1});
    auto fexec = rt::Executor::Create(**fm, rt::ExecOptions{threads, 1});
    if (!exec.ok() || !fexec.ok()) return 1;
    rt::FusedRunOptions def, rows, untiled, tile32, tile16;
    tile32.tile = 32;  // the codegen decision's tile32 / tile16 walks (hlox_tile)
    tile16.tile = 16;
    rows.tiled = false;
    rows.vector_path = false;
    untiled.tiled = false;
    auto first = (*prog)->Run(ptrs, &pool, def);
    auto second = (*prog)->Run(ptrs, &pool, rows);
    auto unf = (*exec)->Run(in);
    auto fus = (*fexec)->Run(in);
    if (!fus.ok()) return 1;
    if (!first.ok() || !second.ok() || !unf.ok()) return 1;
    const rt::Buffer& a = *first->array;
    const bool same = std::memcmp(a.data(), second->array->data(), a.byte_size()) == 0;
    const bool same_unfused = std::memcmp(a.data(), unf->array->data(), a.byte_size()) == 0;
    std::vector<char> src(static_cast<size_t>(a.byte_size())), dst(src.size());
    Best t_def, t_rows, t_untiled, t_unf, t_fexec, t_copy, t_32, t_16;
    for (int r = 0; r < reps; ++r) {
      t_fexec.Time([&] { auto o = (*fexec)->Run(in); });
      t_def.Time([&] { auto o = (*prog)->Run(ptrs, &pool, def); });
      t_untiled.Time([&] { auto o = (*prog)->Run(ptrs, &pool, untiled); });
      t_32.Time([&] { auto o = (*prog)->Run(ptrs, &pool, tile32); });
      t_16.Time([&] { auto o = (*prog)->Run(ptrs, &pool, tile16); });
      t_rows.Time([&] { auto o = (*prog)->Run(ptrs, &pool, rows); });
      t_unf.Time([&] { auto o = (*exec)->Run(in); });
      t_copy.Time([&] {
        pool.ParallelFor(static_cast<int64_t>(src.size()), 1 << 18, [&](int64_t lo, int64_t hi) {
          std::memcpy(dst.data() + lo, src.data() + lo, static_cast<size_t>(hi - lo));
        });
      });
    }
    std::printf("%-17s threads=%d default %7.3f ms | untiled %7.3f ms (%.2fx) | row order %7.3f "
                "ms (%.2fx) | unfused %7.3f ms (%.2fx) | copy floor %6.3f ms (default %.2fx floor) "
                "| bits: row order %s, unfused %s\n%-17s threads=%d executor: fused module %7.3f ms, "
                "unfused module %7.3f ms (unfused / fused %.2fx)\n",
                c.name, threads, t_def.s * 1e3, t_untiled.s * 1e3, t_untiled.s / t_def.s,
                t_rows.s * 1e3, t_rows.s / t_def.s, t_unf.s * 1e3,
                t_unf.s / t_def.s, t_copy.s * 1e3, t_def.s / t_copy.s, same ? "same" : "DIFFER",
                same_unfused ? "same" : "DIFFER", c.name, threads, t_fexec.s * 1e3, t_unf.s * 1e3,
                t_unf.s / t_fexec.s);
    std::printf("%-17s threads=%d tiles of 32 %7.3f ms (%.2fx) | of 16 %7.3f ms (%.2fx)\n", c.name, threads,
                t_32.s * 1e3, t_32.s / t_def.s, t_16.s * 1e3, t_16.s / t_def.s);
  }
  return 0;
}

int Main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
  std::vector<std::string> only;
  if (argc > 2) only = absl::StrSplit(std::string(argv[2]), ',');
  std::printf("fusion_layout_bench: best of %d interleaved runs per variant\n", reps);
  for (const Case& c : kCases) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
    if (RunCase(c, reps) != 0) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
