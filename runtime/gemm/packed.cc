// The driver of the packed f32 GEMM (gemm/packed.h), for any level's micro-kernels. Two
// schedules:
// - column mode (few rows, or C at least twice as wide as tall): all of A is packed once into a
//   buffer shared by all threads, then units of B panels run in parallel, each packing its B
//   chunk just before use (so B never makes an L3 round trip);
// - row mode (otherwise): B is packed once per group of k-blocks into the shared buffer, then
//   units of A panels run in parallel, each packing its own A (mc_panels panels at a time).
// Either way each A panel (L1) meets a chunk of nc_panels B panels (L2) in turn. A single panel
// of rows reads B in place. Work is split over m/n only, never over k, and each C element adds
// its k-blocks in order with the same FMA sequence, so any split or thread count gives the same
// bits.
// SgemmPanels runs the same schedules with both operands packed by a PanelSource (operands that
// exist only implicitly, such as a convolution's shifted input planes).
#include "runtime/gemm/packed.h"

#include <algorithm>
#include <cstddef>
#include <new>

#include "runtime/gemm/gemm.h"

namespace hlox::rt::gemm {
namespace {

constexpr int64_t kBBufferFloats = 2 << 20;  // cap on packed B per pass (8 MiB)
constexpr int64_t kMinUnits = 32;             // split columns too when m has fewer panels
// Packing chunk of a parallel GEMM: 16K floats (64 KiB, a few us) per chunk, so a shared pack
// that the compute phase waits for is split too (the pack of a 256^3 GEMM is about a tenth of
// its 2-thread time), while a pack smaller than one chunk stays on the calling thread.
constexpr int64_t kPackGrainFloats = 1 << 14;
constexpr int64_t kMaxUnpackedBPanels = 1;    // up to this many A panels, B is read in place

// Grow-only 64-byte aligned scratch, one per thread and role, so steady state never allocates.
class Scratch {
 public:
  ~Scratch() { operator delete[](data_, std::align_val_t(64)); }
  float* Get(int64_t floats) {
    if (floats > cap_) {
      operator delete[](data_, std::align_val_t(64));
      data_ = nullptr;  // stays valid if the allocation below throws
      cap_ = 0;
      data_ = static_cast<float*>(operator new[](sizeof(float) * floats, std::align_val_t(64)));
      cap_ = floats;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  int64_t cap_ = 0;
};

thread_local Scratch t_shared;  // the calling thread's buffer shared with the units
thread_local Scratch t_local;   // a unit's own A (row mode) or B chunk (column mode)

// The fixed problem description shared by every work unit.
struct Problem {
  const MicroKernels& mk;
  bool ta, tb, accumulate;
  bool pack_b;  // false: B (not transposed) is read in place
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
  int64_t kcb;  // k-block size (k split into equal blocks of at most mk.kc)
  int64_t mp, np;  // panels of mk.mr rows / mk.nr columns
  const PanelSource* src = nullptr;  // packs both operands when set (a, b unused)
  bool a_pmajor = false;             // layout of packed A panels
  const GemmDone* done = nullptr;    // told of each finished part of C (may be null)
  int64_t KBlocks() const { return (k + kcb - 1) / kcb; }
  // Tells `done` that C panels [ip0, ip1) x [jp0, jp1) are final.
  void Done(int64_t ip0, int64_t ip1, int64_t jp0, int64_t jp1) const {
    if (done != nullptr) {
      (*done)(ip0 * mk.mr, std::min(m, ip1 * mk.mr), jp0 * mk.nr, std::min(n, jp1 * mk.nr));
    }
  }
  int64_t KcOf(int64_t kb) const { return std::min(kcb, k - kb * kcb); }
  int MrOf(int64_t ip) const { return static_cast<int>(std::min<int64_t>(mk.mr, m - ip * mk.mr)); }
  int NrOf(int64_t jp) const { return static_cast<int>(std::min<int64_t>(mk.nr, n - jp * mk.nr)); }
  // Packs A panel ip / B panel jp of k-block kb into dst.
  void PackAPanel(int64_t ip, int64_t kb, float* dst) const {
    if (src != nullptr) src->PackA(mk, ip * mk.mr, MrOf(ip), kb * kcb, KcOf(kb), dst);
    else mk.pack_a(ta, a, lda, ip * mk.mr, MrOf(ip), kb * kcb, KcOf(kb), dst);
  }
  void PackBPanel(int64_t kb, int64_t jp, float* dst) const {
    if (src != nullptr) src->PackB(mk, kb * kcb, KcOf(kb), jp * mk.nr, NrOf(jp), dst);
    else mk.pack_b(tb, b, ldb, kb * kcb, KcOf(kb), jp * mk.nr, NrOf(jp), dst);
  }
};

// Runs the micro-kernel on C panels [ip0, ip1) x [jp0, jp1) for k-block kb: A panel ip at
// apanel(ip), B panel jp at bpanel(jp) (ignored when B is read in place). Each A panel (L1)
// meets a chunk of nc_panels B panels (L2) in turn, or with b_panel_in_l1 each B panel meets a
// block of mc_panels A panels.
template <typename APanel, typename BPanel>
void Tiles(const Problem& pr, int64_t kb, int64_t ip0, int64_t ip1, int64_t jp0, int64_t jp1, APanel apanel,
           BPanel bpanel) {
  int64_t pc = kb * pr.kcb, kc = pr.KcOf(kb);
  bool load_c = pr.accumulate || kb > 0;
  const MicroKernels& mk = pr.mk;
  // The kernel of a whole tile, picked once; edge tiles (last panel of rows or columns) pick
  // their own.
  const KernelFn whole = mk.pick(pr.a_pmajor, pr.pack_b, mk.mr, mk.nr);
  auto run = [&](int64_t ip, int64_t jp) {
    const float* ap = apanel(ip);
    const int mr = pr.MrOf(ip), nr = pr.NrOf(jp);
    float* ct = pr.c + ip * mk.mr * pr.ldc + jp * mk.nr;
    KernelFn kernel = mr == mk.mr && nr == mk.nr ? whole : mk.pick(pr.a_pmajor, pr.pack_b, mr, nr);
    if (pr.pack_b) kernel(kc, ap, bpanel(jp), mk.nr, ct, pr.ldc, mr, nr, load_c);
    else kernel(kc, ap, pr.b + pc * pr.ldb + jp * mk.nr, pr.ldb, ct, pr.ldc, mr, nr, load_c);
  };
  if (mk.b_panel_in_l1) {
    for (int64_t ib = ip0; ib < ip1; ib += mk.mc_panels) {
      const int64_t ie = std::min(ip1, ib + mk.mc_panels);
      for (int64_t jp = jp0; jp < jp1; ++jp) {
        for (int64_t ip = ib; ip < ie; ++ip) run(ip, jp);
      }
    }
    return;
  }
  for (int64_t jc = jp0; jc < jp1; jc += mk.nc_panels) {
    const int64_t je = std::min(jp1, jc + mk.nc_panels);
    for (int64_t ip = ip0; ip < ip1; ++ip) {
      for (int64_t jp = jc; jp < je; ++jp) run(ip, jp);
    }
  }
}

// Row mode unit: C panels [ip0, ip1) x [jp0, jp1) for k-blocks [kb0, kb1); packs its own A
// (mc_panels panels at a time) and reads B from the shared `bpack` (panel (kb, jp) at
// ((kb - kb0) * jbn + jp - jb0) * kcb * nr), or in place.
void RowUnit(const Problem& pr, int64_t ip0, int64_t ip1, int64_t jp0, int64_t jp1, int64_t kb0, int64_t kb1,
             int64_t jb0, int64_t jbn, const float* bpack) {
  const MicroKernels& mk = pr.mk;
  const int64_t a_panel = mk.a_panel();
  float* apack = t_local.Get(mk.mc_panels * a_panel);
  int64_t subs = (ip1 - ip0 + mk.mc_panels - 1) / mk.mc_panels;  // equal sub-blocks, no small remainder
  for (int64_t sb = 0; sb < subs; ++sb) {
    int64_t ib = ip0 + (ip1 - ip0) * sb / subs, ie = ip0 + (ip1 - ip0) * (sb + 1) / subs;
    for (int64_t kb = kb0; kb < kb1; ++kb) {
      for (int64_t ip = ib; ip < ie; ++ip) {
        pr.PackAPanel(ip, kb, apack + (ip - ib) * a_panel);
      }
      Tiles(pr, kb, ib, ie, jp0, jp1, [&](int64_t ip) { return apack + (ip - ib) * a_panel; },
            [&](int64_t jp) { return bpack + ((kb - kb0) * jbn + (jp - jb0)) * pr.kcb * mk.nr; });
    }
    if (kb1 == pr.KBlocks()) pr.Done(ib, ie, jp0, jp1);  // this sub-block's C is still in L2
  }
}

// Row mode (tall or square C): B is packed once per k-block group into a shared buffer, then
// units of A panels (times column groups when m is short) run in parallel.
void RowMode(const Problem& pr, bool parallel, ThreadPool* pool) {
  int64_t kblocks = (pr.k + pr.kcb - 1) / pr.kcb, panel_floats = pr.kcb * pr.mk.nr, mp = pr.mp, np = pr.np;
  // Column blocks only when one k-block of packed B exceeds the buffer; then k-block groups.
  int64_t nb_panels = pr.pack_b ? std::clamp<int64_t>(kBBufferFloats / panel_floats, 1, np) : np;
  for (int64_t jb0 = 0; jb0 < np; jb0 += nb_panels) {
    int64_t jbn = std::min(nb_panels, np - jb0);
    int64_t group = pr.pack_b ? std::clamp<int64_t>(kBBufferFloats / (panel_floats * jbn), 1, kblocks) : kblocks;
    float* bpack = pr.pack_b ? t_shared.Get(group * jbn * panel_floats) : nullptr;
    for (int64_t kb0 = 0; kb0 < kblocks; kb0 += group) {
      int64_t kb1 = std::min(kblocks, kb0 + group);
      if (pr.pack_b) {
        auto pack = [&](int64_t lo, int64_t hi) {
          for (int64_t u = lo; u < hi; ++u) {
            int64_t kb = kb0 + u / jbn, jp = jb0 + u % jbn;
            pr.PackBPanel(kb, jp, bpack + u * panel_floats);
          }
        };
        int64_t units = (kb1 - kb0) * jbn;
        if (parallel) pool->ParallelFor(units, std::max<int64_t>(1, kPackGrainFloats / panel_floats), pack);
        else pack(0, units);
      }
      int64_t groups = 1;  // a power of two, so column groups split B panels evenly
      while (parallel && mp * groups < kMinUnits && groups * 2 <= jbn) groups *= 2;
      auto compute = [&](int64_t lo, int64_t hi) {
        while (lo < hi) {
          int64_t g = lo / mp, ip0 = lo % mp, ip1 = std::min(mp, ip0 + (hi - lo));
          RowUnit(pr, ip0, ip1, jb0 + jbn * g / groups, jb0 + jbn * (g + 1) / groups, kb0, kb1, jb0, jbn, bpack);
          lo += ip1 - ip0;
        }
      };
      if (parallel) pool->ParallelFor(mp * groups, 1, compute);
      else compute(0, mp * groups);
    }
  }
}

// Column mode (few rows or a wide C): all of A for a k-block group is packed once
// into a shared buffer; each unit of B panels packs them chunk by chunk into its own L2-sized
// buffer right before use, so B is read from memory once and never makes an L3 round trip.
void ColumnMode(const Problem& pr, bool parallel, ThreadPool* pool) {
  const MicroKernels& mk = pr.mk;
  const int64_t a_panel = mk.a_panel();
  int64_t kblocks = (pr.k + pr.kcb - 1) / pr.kcb, panel_floats = pr.kcb * mk.nr, mp = pr.mp;
  int64_t group = std::clamp<int64_t>(kBBufferFloats / (mp * a_panel), 1, kblocks);
  float* apack = t_shared.Get(group * mp * a_panel);
  for (int64_t kb0 = 0; kb0 < kblocks; kb0 += group) {
    int64_t kb1 = std::min(kblocks, kb0 + group);
    auto pack = [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        int64_t kb = kb0 + u / mp, ip = u % mp;
        pr.PackAPanel(ip, kb, apack + u * a_panel);
      }
    };
    int64_t units = (kb1 - kb0) * mp;
    // Grain by the floats a panel really holds (mr x kc; a_panel counts the padded k-stride).
    if (parallel) pool->ParallelFor(units, std::max<int64_t>(1, kPackGrainFloats / (mk.mr * pr.kcb)), pack);
    else pack(0, units);
    auto compute = [&](int64_t lo, int64_t hi) {
      float* bchunk = t_local.Get(mk.nc_panels * panel_floats);
      for (int64_t jc = lo; jc < hi; jc += mk.nc_panels) {
        int64_t je = std::min(hi, jc + mk.nc_panels);
        for (int64_t kb = kb0; kb < kb1; ++kb) {
          for (int64_t jp = jc; jp < je; ++jp) {
            pr.PackBPanel(kb, jp, bchunk + (jp - jc) * panel_floats);
          }
          Tiles(pr, kb, 0, mp, jc, je, [&](int64_t ip) { return apack + ((kb - kb0) * mp + ip) * a_panel; },
                [&](int64_t jp) { return bchunk + (jp - jc) * panel_floats; });
        }
      }
      // The unit's columns at once: C has few rows here, so they are still in L2, and wider
      // parts are cheaper for the consumer than one per chunk.
      if (kb1 == kblocks) pr.Done(0, mp, lo, hi);
    };
    if (parallel) pool->ParallelFor(pr.np, 1, compute);
    else compute(0, pr.np);
  }
}

// Picks the schedule for a filled-in problem (or takes the tuned one) and runs it.
void Run(const Problem& pr, ThreadPool* pool, GemmTuning::Schedule schedule) {
  bool parallel = pool != nullptr && pool->threads() > 1 && double(pr.m) * double(pr.n) * double(pr.k) >= kParallelMinMnk;
  // Column mode when rows are few, or when C is wide (its B chunks are packed just in time) and
  // all of A for a k-block fits the shared buffer; row mode when it would leave threads idle.
  bool columns = pr.mp <= pr.mk.mc_panels || (pr.n >= 2 * pr.m && pr.mp * pr.mk.a_panel() <= kBBufferFloats);
  columns = columns && !(parallel && pr.np < 4);
  // A tuned schedule wins, except that column mode never packs more than 8 shared buffers of A
  // (its per-thread scratch lives as long as the thread).
  if (schedule != GemmTuning::kAutoSchedule) {
    columns = schedule == GemmTuning::kColumns && pr.mp * pr.mk.a_panel() <= 8 * kBBufferFloats;
  }
  if (pr.pack_b && columns) ColumnMode(pr, parallel, pool);
  else RowMode(pr, parallel, pool);
}

// The level's geometry with a dot's tuned blocking.
MicroKernels Tuned(const MicroKernels& mk, const GemmTuning& t) {
  MicroKernels out = mk;
  if (t.mc_panels > 0) out.mc_panels = std::clamp<int64_t>(t.mc_panels, 1, 256);
  if (t.nc_panels > 0) out.nc_panels = std::clamp<int64_t>(t.nc_panels, 1, 256);
  if (t.b_panel_in_l1) out.b_panel_in_l1 = true;
  return out;
}

}  // namespace

void SgemmPacked(const MicroKernels& level, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, ThreadPool* pool,
                 const GemmTuning& tuning, const GemmDone* done) {
  const MicroKernels mk = Tuned(level, tuning);
  if (tuning.threads == 1) pool = nullptr;
  int64_t kblocks = (k + mk.kc - 1) / mk.kc;
  int64_t mp = (m + mk.mr - 1) / mk.mr, np = (n + mk.nr - 1) / mk.nr;
  // With few rows of C each B element is used at most kMaxUnpackedBPanels times: packing it
  // would cost more than it saves.
  bool pack_b = tb || mp > kMaxUnpackedBPanels;
  Problem pr{mk, ta, tb, accumulate, pack_b, m, n, k, a, lda, b, ldb, c, ldc, (k + kblocks - 1) / kblocks, mp, np};
  pr.a_pmajor = ta;
  pr.done = done;
  Run(pr, pool, tuning.schedule);
}

void SgemmPanels(const MicroKernels& mk, int64_t m, int64_t n, int64_t k, const PanelSource& src, float* c,
                 int64_t ldc, bool accumulate, ThreadPool* pool, const GemmDone* done) {
  int64_t kblocks = (k + mk.kc - 1) / mk.kc;
  int64_t mp = (m + mk.mr - 1) / mk.mr, np = (n + mk.nr - 1) / mk.nr;
  Problem pr{mk, false, false, accumulate, true, m, n, k, nullptr, 0, nullptr, 0, c, ldc, (k + kblocks - 1) / kblocks, mp, np};
  pr.src = &src;
  pr.a_pmajor = src.a_pmajor();
  pr.done = done;
  Run(pr, pool, GemmTuning::kAutoSchedule);
}

}  // namespace hlox::rt::gemm
