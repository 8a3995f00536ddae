// FusedJit (see fused/jit.h): turns a VectorProgram's op list into values (each op one value;
// operands an input, a scalar or an earlier value), allocates vector registers for every value
// of `unroll` groups at once (4, else 2, else 1 when registers run out), and emits the loop:
// zmm code (32 registers, opmask selects, vscalefps) for the AVX-512 level, ymm code (16
// registers, blend selects, exponent arithmetic for 2^n) for the AVX2 level, from one emitter
// templated on the register type. The registers the loop leaves free hold its most-read
// invariants (kernel constants and the program's scalars), loaded once before the loop; the
// rest are memory operands (AVX-512 broadcasts, whole ymm vectors for AVX2). On the 6-op chain exp(tanh(2x+1)*y)-z (Zen 5, in L1) emitting each op for two
// groups at a time and pinning 12-20 invariants took the loop from 22.1 to 20.8 cycles per
// 16 elements, against 18.4 for tanh and exp as two loops of their own.
#include "runtime/fused/jit.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <initializer_list>

#if defined(HLOX_HAVE_XBYAK)
#define HLOX_JIT 1
#include <xbyak/xbyak.h>

#include "common/cpu_isa.h"
#include "runtime/fused/vector_ops.h"
#include "runtime/math/vmath_coef.h"
#endif

namespace hlox::rt {

#if defined(HLOX_JIT)
namespace {

using vecops::VecCode;

// Where an op reads an operand.
struct Ref {
  enum Kind : uint8_t { kInput, kScalar, kValue } kind = kInput;
  int64_t index = 0;
};
struct JitValue {
  uint8_t code = 0;
  Ref a, b;
  int64_t last_use = -1;  // the last op reading it; kEnd when an output takes it
};
constexpr int64_t kEnd = INT64_MAX;

bool Emits(uint8_t code) { return code != vecops::kLog && code != vecops::kRoundF16 && code <= vecops::kRoundF16; }

// The program as values.
struct Plan {
  std::vector<JitValue> values;
  std::vector<Ref> outputs;
  std::vector<int64_t> input_last_use;  // per input: last op reading it (kEnd: an output)
  int64_t inputs = 0;
  int64_t scalars = 0;
};

// Constants the kernels read, each stored as one vector of 16 lanes (64 bytes) at
// kConst + 64 * index, read as a broadcast (zmm) or as a whole vector (ymm).
enum Const : int {
  kOne, kSign, kAbsMask, kZero, kExpBias,
  kExpHi, kExpLo, kLog2e, kLn2Hi, kLn2Lo, kP0, kP1, kP2, kP3, kP4,
  kTanhClamp, kTanhClampNeg, kTanhTiny,
  kA1, kA3, kA5, kA7, kA9, kA11, kA13, kB0, kB2, kB4, kB6,
  kErfClamp, kErfClampNeg, kErfP0, kErfP1, kErfP2, kErfP3, kErfP4, kErfP5, kErfP6,
  kErfQ0, kErfQ1, kErfQ2, kErfQ3, kErfQ4,
  kBf16One, kBf16Round, kBf16Hi, kBf16Quiet,
  kConstCount
};

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

std::vector<uint32_t> ConstTable() {
  namespace c = vmath::coef;  // (its names clash with Const's)
  std::vector<uint32_t> t(kConstCount);
  t[kOne] = Bits(1.0f);
  t[kSign] = 0x80000000u;
  t[kAbsMask] = 0x7fffffffu;
  t[kZero] = 0;
  t[kExpBias] = 127;
  t[kExpHi] = Bits(c::kExpHi);
  t[kExpLo] = Bits(c::kExpLo);
  t[kLog2e] = Bits(c::kLog2e);
  t[kLn2Hi] = Bits(c::kLn2Hi);
  t[kLn2Lo] = Bits(c::kLn2Lo);
  t[kP0] = Bits(c::kExpP0);
  t[kP1] = Bits(c::kExpP1);
  t[kP2] = Bits(c::kExpP2);
  t[kP3] = Bits(c::kExpP3);
  t[kP4] = Bits(c::kExpP4);
  // runtime/isa/simd/math.h's Tanh, constant for constant.
  t[kTanhClamp] = Bits(c::kTanhClamp);
  t[kTanhClampNeg] = t[kTanhClamp] | 0x80000000u;
  t[kTanhTiny] = Bits(c::kTanhTiny);
  for (int i = 0; i < 7; ++i) t[kA1 + i] = Bits(c::kTanhA[i]);
  for (int i = 0; i < 4; ++i) t[kB0 + i] = Bits(c::kTanhB[i]);
  // ... and its Erf.
  t[kErfClamp] = Bits(c::kErfClamp);
  t[kErfClampNeg] = t[kErfClamp] | 0x80000000u;
  for (int i = 0; i < 7; ++i) t[kErfP0 + i] = Bits(c::kErfP[i]);
  for (int i = 0; i < 5; ++i) t[kErfQ0 + i] = Bits(c::kErfQ[i]);
  t[kBf16One] = 1;
  t[kBf16Round] = 0x7fff;
  t[kBf16Hi] = 0xffff0000u;
  t[kBf16Quiet] = 0x400000;
  return t;
}

// Out of vector registers at this unroll.
struct NoRegisters {};

// vcmpps predicates.
constexpr uint8_t kLtOq = 0x11, kGtOq = 0x1e, kUnordQ = 0x03;
// vrndscaleps immediates (rounding mode | suppress exceptions).
constexpr uint8_t kNear = 0x08, kDown = 0x09, kUp = 0x0a;

// Loop invariants a kernel may keep in registers for the whole loop: constants (Const) and the
// program's scalars (kConstCount + scalar index).
struct Pins {
  std::vector<int> invariants;  // pinned, each in its own register
};

// One register per unrolled group.
using Regs = std::vector<int>;
// Groups an op is emitted for at once, instruction by instruction (Emitter::EmitOps).
constexpr int kInterleave = 2;

// Emits the loop with vector registers of type Vec: Xbyak::Zmm (AVX-512) or Xbyak::Ymm (AVX2).
template <class Vec>
class Emitter : public Xbyak::CodeGenerator {
 public:
  static constexpr bool kZmm = std::is_same_v<Vec, Xbyak::Zmm>;
  static constexpr int kRegs = kZmm ? 32 : 16;
  static constexpr int kLanes = kZmm ? 16 : 8;
  static constexpr int kVecBytes = 4 * kLanes;

  Emitter(const Plan& plan, int unroll, FusedJit::Variant variant, const Pins& pins, size_t bytes)
      : Xbyak::CodeGenerator(bytes, Xbyak::DontSetProtectRWE), plan_(plan), unroll_(unroll) {
    const int count = kConstCount + static_cast<int>(plan.scalars);
    uses_.assign(count, 0);
    pinned_.assign(count, -1);
    free_ = kRegs == 32 ? 0xffffffffu : 0xffffu;
    for (int c = 0; c < kConstCount; ++c) {
      if constexpr (kZmm) cst_.push_back(ptr_b[consts_ + 64 * c]);
      else cst_.push_back(ptr[consts_ + 64 * c]);
    }
    for (int i : pins.invariants) pinned_[i] = Alloc();
    Body(variant);
    ready();
    setProtectModeRE();  // written, now read and execute only
  }

  // Reads of each invariant per loop iteration, and the most registers held at once (pinned
  // ones included): pinning k more invariants fits when peak() + k <= kRegs.
  const std::vector<int>& uses() const { return uses_; }
  int peak() const { return peak_; }

 private:
  // General registers: the loop position (elements), its end, the scalars, the constants, and
  // one per stream (inputs, then outputs).
  const Xbyak::Reg64 pos_ = rax, end_ = rdx, scalars_ = rsi, consts_ = rcx;
  const Xbyak::Reg64 streams_[FusedJit::kMaxStreams] = {r10, r11, rbx, rbp, r12, r13, r14, r15};

  Xbyak::Address At(int stream, int u, int64_t ahead = 0) {
    return ptr[streams_[stream] + pos_ * 4 + static_cast<int>(kVecBytes * u + 4 * ahead)];
  }
  // The byte at `offset` of the current position's elements in input stream `stream`, ahead.
  Xbyak::Address Line(int stream, int64_t offset) {
    return ptr[streams_[stream] + pos_ * 4 + static_cast<int>(offset)];
  }

  // Constant c as the last operand of an arithmetic op: its register when pinned, else a
  // memory operand from the table.
  const Xbyak::Operand& K(Const c) {
    ++uses_[c];
    if (pinned_[c] >= 0) {
      pin_ = Vec(pinned_[c]);
      return pin_;
    }
    return cst_[c];
  }
  // d = constant c in every lane.
  void Set(const Vec& d, Const c) {
    ++uses_[c];
    if (pinned_[c] >= 0) vmovaps(d, Vec(pinned_[c]));
    else vbroadcastss(d, ptr[consts_ + 64 * static_cast<int>(c)]);
  }
  // Constant c in a register: its pinned one, else loaded into `scratch`.
  Vec In(Const c, const Vec& scratch) {
    if (pinned_[c] >= 0) {
      ++uses_[c];
      return Vec(pinned_[c]);
    }
    Set(scratch, c);
    return scratch;
  }

  int Alloc() {
    if (free_ == 0) throw NoRegisters{};
    const int r = std::countr_zero(free_);
    free_ &= ~(1u << r);
    peak_ = std::max(peak_, kRegs - std::popcount(free_));
    return r;
  }
  void Free(int r) { free_ |= 1u << r; }
  Regs Group() {
    Regs r(width_);
    for (int& z : r) z = Alloc();
    return r;
  }
  void Free(const Regs& r) {
    for (int z : r) Free(z);
  }
  // Emits f(u) for every group: each instruction of a sequence for all groups before the next,
  // so the groups' dependency chains interleave.
  template <typename F>
  void Each(F&& f) {
    for (int u = 0; u < width_; ++u) f(u);
  }

  // The registers holding ref r for every group, loading an input (kept to its last use) or
  // broadcasting a scalar (pinned, or into one register the caller frees) as needed.
  Regs Operand(const Ref& r, std::vector<int>* temps) {
    switch (r.kind) {
      case Ref::kValue: return value_reg_[r.index];
      case Ref::kScalar: {
        const int inv = kConstCount + static_cast<int>(r.index);
        ++uses_[inv];
        if (pinned_[inv] >= 0) return Regs(unroll_, pinned_[inv]);
        const int z = Alloc();
        vbroadcastss(Vec(z), ptr[scalars_ + static_cast<int>(4 * r.index)]);
        temps->push_back(z);
        return Regs(unroll_, z);
      }
      default: {
        Regs& z = input_reg_[r.index];
        Each([&](int u) {
          if (z[u] < 0) {
            z[u] = Alloc();
            vmovups(Vec(z[u]), At(static_cast<int>(r.index), u));
          }
        });
        return z;
      }
    }
  }

  void Body(FusedJit::Variant variant) {
    const int nin = static_cast<int>(plan_.inputs);
    const int nvals = static_cast<int>(plan_.values.size());
    const int64_t step = kLanes * unroll_;
    value_reg_.assign(nvals, Regs(unroll_, -1));
    input_reg_.assign(nin, Regs(unroll_, -1));
    Xbyak::Label loop, done, table;
    for (const Xbyak::Reg64& r : {rbx, rbp, r12, r13, r14, r15}) push(r);
    // Args: in, out, scalars, begin, end (fused/jit.h).
    mov(r8, ptr[rdi]);
    mov(r9, ptr[rdi + 8]);
    mov(scalars_, ptr[rdi + 16]);
    mov(pos_, ptr[rdi + 24]);
    mov(end_, ptr[rdi + 32]);
    lea(consts_, ptr[rip + table]);
    for (int s = 0; s < nin + static_cast<int>(plan_.outputs.size()); ++s) {
      mov(streams_[s], ptr[(s < nin ? r8 : r9) + 8 * (s < nin ? s : s - nin)]);
    }
    for (int i = 0; i < static_cast<int>(pinned_.size()); ++i) {
      if (pinned_[i] < 0) continue;
      if (i < kConstCount) vbroadcastss(Vec(pinned_[i]), ptr[consts_ + 64 * i]);
      else vbroadcastss(Vec(pinned_[i]), ptr[scalars_ + 4 * (i - kConstCount)]);
    }
    cmp(pos_, end_);
    jge(done, T_NEAR);
    // One prefetch per 64-byte input line of the iteration kPrefetchAhead elements on, spread
    // over the loop body's ops.
    const int per_input = (kVecBytes * unroll_ + 63) / 64;
    const int lines = variant == FusedJit::kCached ? 0 : nin * per_input;
    int issued = 0, emitted = 0;
    auto prefetch = [&] {
      ++emitted;
      for (; issued < (emitted * lines) / std::max(1, nvals); ++issued) {
        prefetcht0(Line(issued % nin, 4 * FusedJit::kPrefetchAhead + 64 * (issued / nin)));
      }
    };
    align(16);
    L(loop);
    EmitOps(prefetch);
    EmitStores(variant);
    add(pos_, step);
    cmp(pos_, end_);
    jl(loop, T_NEAR);
    L(done);
    vzeroupper();
    for (const Xbyak::Reg64& r : {r15, r14, r13, r12, rbp, rbx}) pop(r);
    ret();
    align(64);
    L(table);
    for (uint32_t c : ConstTable()) {
      for (int lane = 0; lane < 16; ++lane) dd(c);
    }
  }

  // Emits every op, calling after_op after each. Each op is emitted for two groups at a time,
  // instruction by instruction (on Zen 5 this ran the 6-op chain 6% faster than all groups in
  // step and 3% faster than one group at a time). A register is freed after the op that
  // reads its value or input last.
  template <typename F>
  void EmitOps(F&& after_op) {
    for (int j = 0; j < static_cast<int>(plan_.values.size()); ++j) {
      const JitValue& v = plan_.values[j];
      std::vector<int> temps;
      const Regs a = Operand(v.a, &temps);
      const Regs b = vecops::IsUnary(v.code) ? a : Operand(v.b, &temps);
      Regs d;
      for (int u = 0; u < unroll_; u += kInterleave) {
        width_ = std::min(kInterleave, unroll_ - u);
        auto slice = [&](const Regs& r) { return Regs(r.begin() + u, r.begin() + u + width_); };
        const Regs ds = Group();
        Op(v.code, ds, slice(a), slice(b));
        d.insert(d.end(), ds.begin(), ds.end());
      }
      width_ = unroll_;
      value_reg_[j] = d;
      for (int z : temps) Free(z);
      for (const Ref& r : {v.a, v.b}) {
        if (r.kind == Ref::kValue && plan_.values[r.index].last_use == j && value_reg_[r.index][0] >= 0) {
          Free(value_reg_[r.index]);
          value_reg_[r.index].assign(unroll_, -1);
        } else if (r.kind == Ref::kInput && plan_.input_last_use[r.index] == j && input_reg_[r.index][0] >= 0) {
          Free(input_reg_[r.index]);
          input_reg_[r.index].assign(unroll_, -1);
        }
      }
      if (v.last_use < 0) {  // read by nothing (not expected from Build, but harmless)
        Free(d);
        value_reg_[j].assign(unroll_, -1);
      }
      after_op();
    }
  }

  // Stores every output of the block at pos_.
  void EmitStores(FusedJit::Variant variant) {
    const int nin = static_cast<int>(plan_.inputs);
    for (int k = 0; k < static_cast<int>(plan_.outputs.size()); ++k) {
      std::vector<int> temps;
      const Regs z = Operand(plan_.outputs[k], &temps);
      Each([&](int u) {
        if (variant == FusedJit::kPrefetchStream) vmovntps(At(nin + k, u), Vec(z[u]));
        else vmovups(At(nin + k, u), Vec(z[u]));
      });
      for (int t : temps) Free(t);
    }
  }

  // d = op(a, b) for every group, d distinct from a and b; scratch registers allocated and
  // freed here.
  void Op(uint8_t code, const Regs& d, const Regs& a, const Regs& b) {
    auto each = [&](auto inst) { Each([&](int u) { inst(Vec(d[u]), Vec(a[u]), Vec(b[u])); }); };
    switch (code) {
      case vecops::kAdd: each([&](Vec D, Vec A, Vec B) { vaddps(D, A, B); }); break;
      case vecops::kSub: each([&](Vec D, Vec A, Vec B) { vsubps(D, A, B); }); break;
      case vecops::kMul: each([&](Vec D, Vec A, Vec B) { vmulps(D, A, B); }); break;
      case vecops::kDiv: each([&](Vec D, Vec A, Vec B) { vdivps(D, A, B); }); break;
      case vecops::kMax: MaxMin(d, a, b, kGtOq); break;
      case vecops::kMin: MaxMin(d, a, b, kLtOq); break;
      case vecops::kSqrt: each([&](Vec D, Vec A, Vec) { vsqrtps(D, A); }); break;
      case vecops::kRsqrt: {  // 1 / sqrt(a), correctly rounded twice
        const Regs t = Group();
        Each([&](int u) { vsqrtps(Vec(t[u]), Vec(a[u])); });
        Each([&](int u) { Set(Vec(d[u]), kOne); });
        Each([&](int u) { vdivps(Vec(d[u]), Vec(d[u]), Vec(t[u])); });
        Free(t);
        break;
      }
      case vecops::kAbs: each([&](Vec D, Vec A, Vec) { vandps(D, A, K(kAbsMask)); }); break;
      case vecops::kNeg: each([&](Vec D, Vec A, Vec) { vxorps(D, A, K(kSign)); }); break;
      case vecops::kFloor: each([&](Vec D, Vec A, Vec) { Round(D, A, kDown); }); break;
      case vecops::kCeil: each([&](Vec D, Vec A, Vec) { Round(D, A, kUp); }); break;
      case vecops::kRoundEven: each([&](Vec D, Vec A, Vec) { Round(D, A, kNear); }); break;
      case vecops::kExp: Exp(d, a); break;
      case vecops::kTanh: Tanh(d, a); break;
      case vecops::kErf: Erf(d, a); break;
      case vecops::kLogistic: Logistic(d, a); break;
      case vecops::kRoundBf16: RoundBf16(d, a); break;
      default: throw NoRegisters{};  // not reached: Compile checks Emits()
    }
  }

  // d = a rounded to an integral value (vrndscaleps and vroundps share the immediate).
  void Round(const Vec& d, const Vec& a, uint8_t mode) {
    if constexpr (kZmm) vrndscaleps(d, a, mode);
    else vroundps(d, a, mode);
  }

  // The selects of the formulas: d = (predicate of x and y) ? t : d, per group, through an
  // opmask (zmm; k1..k4, one per group) or a compare into `scratch` and a blend (ymm).
  void SelectIf(const Vec& d, const Vec& x, const Xbyak::Operand& y, uint8_t pred, const Vec& t, const Vec& scratch,
                int u) {
    if constexpr (kZmm) {
      (void)scratch;
      vcmpps(Xbyak::Opmask(1 + u), x, y, pred);
      vmovaps(d | Xbyak::Opmask(1 + u), t);
    } else {
      vcmpps(scratch, x, y, pred);
      vblendvps(d, d, t, scratch);
    }
  }

  // MaxNan / MinNan: pick by the comparison (b on ties), then a where a is NaN, then b where b
  // is NaN.
  void MaxMin(const Regs& d, const Regs& a, const Regs& b, uint8_t pred) {
    const Regs m = kZmm ? Regs() : Group();
    auto scratch = [&](int u) { return kZmm ? Vec(0) : Vec(m[u]); };
    Each([&](int u) { vmovaps(Vec(d[u]), Vec(b[u])); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(a[u]), Vec(b[u]), pred, Vec(a[u]), scratch(u), u); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(a[u]), Vec(a[u]), kUnordQ, Vec(a[u]), scratch(u), u); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(b[u]), Vec(b[u]), kUnordQ, Vec(b[u]), scratch(u), u); });
    if (!kZmm) Free(m);
  }

  // isa/simd/math.h Exp: vscalefps for Scale2 on zmm; on ymm, 2^n as two exponent fields (n >> 1
  // and n - (n >> 1)) multiplied in turn, as Avx2::Scale2.
  void Exp(const Regs& d, const Regs& x) {
    const Regs t = Group(), n = Group(), r2 = Group();
    Each([&](int u) { vminps(Vec(t[u]), In(kExpHi, Vec(t[u])), Vec(x[u])); });  // min(hi, x): NaN x passes
    Each([&](int u) { vmaxps(Vec(t[u]), In(kExpLo, Vec(n[u])), Vec(t[u])); });  // max(lo, t)
    Each([&](int u) { vmulps(Vec(n[u]), Vec(t[u]), K(kLog2e)); });
    Each([&](int u) { Round(Vec(n[u]), Vec(n[u]), kNear); });
    Each([&](int u) { vfnmadd231ps(Vec(t[u]), Vec(n[u]), K(kLn2Hi)); });  // r = t - n * ln2hi - n * ln2lo
    Each([&](int u) { vfnmadd231ps(Vec(t[u]), Vec(n[u]), K(kLn2Lo)); });
    Each([&](int u) { Set(Vec(d[u]), kP4); });  // P(r), Horner from P4
    for (Const c : {kP3, kP2, kP1, kP0}) Each([&](int u) { vfmadd213ps(Vec(d[u]), Vec(t[u]), K(c)); });
    Each([&](int u) { vmulps(Vec(r2[u]), Vec(t[u]), Vec(t[u])); });
    Each([&](int u) { vfmadd213ps(Vec(d[u]), Vec(r2[u]), Vec(t[u])); });  // r + r^2 P(r)
    Each([&](int u) { vaddps(Vec(d[u]), Vec(d[u]), K(kOne)); });
    if constexpr (kZmm) {
      Each([&](int u) { vscalefps(Vec(d[u]), Vec(d[u]), Vec(n[u])); });
    } else {
      Each([&](int u) { vcvtps2dq(Vec(n[u]), Vec(n[u])); });            // n (integral) as int
      Each([&](int u) { vpsrad(Vec(r2[u]), Vec(n[u]), 1); });            // n1 = n >> 1
      Each([&](int u) { vpsubd(Vec(n[u]), Vec(n[u]), Vec(r2[u])); });    // n2 = n - n1
      Each([&](int u) { vpaddd(Vec(r2[u]), Vec(r2[u]), K(kExpBias)); });
      Each([&](int u) { vpslld(Vec(r2[u]), Vec(r2[u]), 23); });          // 2^n1
      Each([&](int u) { vmulps(Vec(d[u]), Vec(d[u]), Vec(r2[u])); });
      Each([&](int u) { vpaddd(Vec(n[u]), Vec(n[u]), K(kExpBias)); });
      Each([&](int u) { vpslld(Vec(n[u]), Vec(n[u]), 23); });            // 2^n2
      Each([&](int u) { vmulps(Vec(d[u]), Vec(d[u]), Vec(n[u])); });
    }
    Free(t), Free(n), Free(r2);
  }

  // isa/simd/math.h ClampedOddRational: d = x * P(x^2) / Q(x^2) with x = a clamped to
  // [c_neg, c]; P's and Q's coefficients from the highest degree down. Leaves x in `x`, x^2 in
  // `x2`; `q` is scratch.
  void ClampedOddRational(const Regs& d, const Regs& a, const Regs& x, const Regs& x2, const Regs& q, Const c,
                          Const c_neg, std::initializer_list<Const> p, std::initializer_list<Const> qc) {
    Each([&](int u) { vminps(Vec(x[u]), In(c, Vec(x[u])), Vec(a[u])); });  // min(c, a): NaN a passes
    Each([&](int u) { vmaxps(Vec(x[u]), In(c_neg, Vec(q[u])), Vec(x[u])); });
    Each([&](int u) { vmulps(Vec(x2[u]), Vec(x[u]), Vec(x[u])); });
    Each([&](int u) { Set(Vec(d[u]), *p.begin()); });
    for (auto it = p.begin() + 1; it != p.end(); ++it) {
      Each([&](int u) { vfmadd213ps(Vec(d[u]), Vec(x2[u]), K(*it)); });
    }
    Each([&](int u) { vmulps(Vec(d[u]), Vec(x[u]), Vec(d[u])); });
    Each([&](int u) { Set(Vec(q[u]), *qc.begin()); });
    for (auto it = qc.begin() + 1; it != qc.end(); ++it) {
      Each([&](int u) { vfmadd213ps(Vec(q[u]), Vec(x2[u]), K(*it)); });
    }
    Each([&](int u) { vdivps(Vec(d[u]), Vec(d[u]), Vec(q[u])); });
  }

  // isa/simd/math.h Tanh: the rational function, and x itself where |a| is tiny.
  void Tanh(const Regs& d, const Regs& a) {
    const Regs x = Group(), x2 = Group(), q = Group();
    ClampedOddRational(d, a, x, x2, q, kTanhClamp, kTanhClampNeg, {kA13, kA11, kA9, kA7, kA5, kA3, kA1},
                       {kB6, kB4, kB2, kB0});
    Each([&](int u) { vandps(Vec(q[u]), Vec(a[u]), K(kAbsMask)); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(q[u]), K(kTanhTiny), kLtOq, Vec(x[u]), Vec(x2[u]), u); });
    Free(x), Free(x2), Free(q);
  }

  // isa/simd/math.h Erf.
  void Erf(const Regs& d, const Regs& a) {
    const Regs x = Group(), x2 = Group(), q = Group();
    ClampedOddRational(d, a, x, x2, q, kErfClamp, kErfClampNeg,
                       {kErfP6, kErfP5, kErfP4, kErfP3, kErfP2, kErfP1, kErfP0}, {kErfQ4, kErfQ3, kErfQ2, kErfQ1, kErfQ0});
    Free(x), Free(x2), Free(q);
  }

  // isa/simd/math.h Logistic: r = 1 / (1 + e) with e = exp(-|x|), times e where x < 0.
  void Logistic(const Regs& d, const Regs& a) {
    const Regs t = Group(), e = Group();
    Each([&](int u) { vorps(Vec(t[u]), Vec(a[u]), K(kSign)); });
    Exp(e, t);
    Each([&](int u) { Set(Vec(d[u]), kOne); });
    Each([&](int u) { vaddps(Vec(t[u]), Vec(d[u]), Vec(e[u])); });
    Each([&](int u) { vdivps(Vec(d[u]), Vec(d[u]), Vec(t[u])); });
    Each([&](int u) { vmulps(Vec(e[u]), Vec(d[u]), Vec(e[u])); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(a[u]), K(kZero), kLtOq, Vec(e[u]), Vec(t[u]), u); });
    Free(t), Free(e);
  }

  // isa/simd/math.h RoundBf16: nearest even to bf16 precision, NaN made quiet.
  void RoundBf16(const Regs& d, const Regs& a) {
    const Regs t = Group(), m = kZmm ? Regs() : Group();  // m: the ymm select's compare
    Each([&](int u) { vpsrld(Vec(t[u]), Vec(a[u]), 16); });
    Each([&](int u) { vandps(Vec(t[u]), Vec(t[u]), K(kBf16One)); });
    Each([&](int u) { vpaddd(Vec(d[u]), Vec(a[u]), K(kBf16Round)); });
    Each([&](int u) { vpaddd(Vec(d[u]), Vec(d[u]), Vec(t[u])); });
    Each([&](int u) { vandps(Vec(d[u]), Vec(d[u]), K(kBf16Hi)); });
    Each([&](int u) { vorps(Vec(t[u]), Vec(a[u]), K(kBf16Quiet)); });
    Each([&](int u) { vandps(Vec(t[u]), Vec(t[u]), K(kBf16Hi)); });
    Each([&](int u) { SelectIf(Vec(d[u]), Vec(a[u]), Vec(a[u]), kUnordQ, Vec(t[u]), kZmm ? Vec(0) : Vec(m[u]), u); });
    Free(t);
    if (!kZmm) Free(m);
  }

  const Plan& plan_;
  const int unroll_;
  uint32_t free_ = 0;
  int peak_ = 0;
  int width_ = unroll_;  // groups the op being emitted covers (Group, Each)
  std::vector<Xbyak::Address> cst_;  // constant c as a memory operand
  std::vector<int> uses_, pinned_;   // per invariant
  Vec pin_;                          // what K returns for a pinned constant
  std::vector<Regs> value_reg_, input_reg_;
};

}  // namespace

struct FusedJit::Code {
  std::unique_ptr<Xbyak::CodeGenerator> gen;
  void (*fn)(const Args*) = nullptr;
};

namespace {

// The kernel for `plan` with Vec registers: per unroll (4 groups, else 2, else 1), one pass with
// nothing pinned gives each invariant's reads and the registers the loop needs; the registers
// left over then pin the most-read invariants (loaded once before the loop instead of a load
// per use). Null when no unroll fits the registers, or the assembler failed.
template <class Vec>
std::unique_ptr<FusedJit> CompileFor(const Plan& plan, IsaLevel level,
                                     std::unique_ptr<FusedJit> (*make)(IsaLevel, int64_t),
                                     void (*set_code)(FusedJit*, int, std::unique_ptr<FusedJit::Code>)) {
  using E = Emitter<Vec>;
  // Bytes: prologue, epilogue and constants, plus a generous bound per op and store.
  const size_t bytes = 8192 + 512 * 4 * (plan.values.size() + plan.outputs.size() + plan.inputs);
  for (int unroll : {4, 2, 1}) {
    try {
      const E probe(plan, unroll, FusedJit::kCached, Pins{}, bytes);
      Pins pins;
      std::vector<int> order;
      for (int i = 0; i < static_cast<int>(probe.uses().size()); ++i) {
        if (probe.uses()[i] > 0) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return probe.uses()[a] > probe.uses()[b]; });
      order.resize(std::min<size_t>(order.size(), std::max(0, E::kRegs - probe.peak())));
      pins.invariants = order;
      std::unique_ptr<FusedJit> jit = make(level, E::kLanes * unroll);
      for (int v = 0; v < 3; ++v) {
        auto code = std::make_unique<FusedJit::Code>();
        auto gen = std::make_unique<E>(plan, unroll, static_cast<FusedJit::Variant>(v), pins, bytes);
        code->fn = gen->template getCode<void (*)(const FusedJit::Args*)>();
        code->gen = std::move(gen);
        set_code(jit.get(), v, std::move(code));
      }
      return jit;
    } catch (const NoRegisters&) {
      continue;  // fewer groups at once
    } catch (const Xbyak::Error&) {
      return nullptr;  // could not map executable memory, or an encoding the assembler refused
    }
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<FusedJit> FusedJit::Compile(const std::vector<VectorProgram::Op>& ops, int64_t inputs,
                                            const std::vector<int64_t>& scalar_temps,
                                            const std::vector<VectorProgram::Slot>& output_slots, IsaLevel level) {
  if (level == IsaLevel::kGeneric) return nullptr;  // vector code only
  if (ops.empty() || output_slots.empty() || inputs < 1 ||
      inputs + static_cast<int64_t>(output_slots.size()) > kMaxStreams) {
    return nullptr;
  }
  // Temporaries hold a scalar until an op writes them; then that op's value.
  Plan plan;
  plan.inputs = inputs;
  plan.scalars = static_cast<int64_t>(scalar_temps.size());
  std::vector<Ref> temp;
  auto grow = [&](int64_t t) {
    if (t >= static_cast<int64_t>(temp.size())) temp.resize(t + 1, Ref{Ref::kValue, -1});
  };
  for (size_t k = 0; k < scalar_temps.size(); ++k) {
    grow(scalar_temps[k]);
    temp[scalar_temps[k]] = Ref{Ref::kScalar, static_cast<int64_t>(k)};
  }
  bool ok = true;
  auto ref = [&](const VectorProgram::Slot& s) {
    if (s.input) {
      ok = ok && s.index >= 0 && s.index < inputs;
      return Ref{Ref::kInput, s.index};
    }
    grow(s.index);
    const Ref r = temp[s.index];
    ok = ok && (r.kind != Ref::kValue || r.index >= 0);  // read before any op wrote it
    return r;
  };
  for (const VectorProgram::Op& op : ops) {
    if (!Emits(op.code)) return nullptr;
    JitValue v;
    v.code = op.code;
    v.a = ref(op.a);
    v.b = vecops::IsUnary(op.code) ? v.a : ref(op.b);
    grow(op.dst);
    temp[op.dst] = Ref{Ref::kValue, static_cast<int64_t>(plan.values.size())};
    plan.values.push_back(v);
  }
  for (const VectorProgram::Slot& s : output_slots) plan.outputs.push_back(ref(s));
  if (!ok) return nullptr;
  plan.input_last_use.assign(inputs, -1);
  for (int64_t j = 0; j < static_cast<int64_t>(plan.values.size()); ++j) {
    for (const Ref& r : {plan.values[j].a, plan.values[j].b}) {
      if (r.kind == Ref::kValue) plan.values[r.index].last_use = j;
      if (r.kind == Ref::kInput) plan.input_last_use[r.index] = j;
    }
  }
  for (const Ref& r : plan.outputs) {
    if (r.kind == Ref::kValue) plan.values[r.index].last_use = kEnd;
    if (r.kind == Ref::kInput) plan.input_last_use[r.index] = kEnd;
  }
  auto make = [](IsaLevel level, int64_t step) {
    std::unique_ptr<FusedJit> jit(new FusedJit);
    jit->level_ = level;
    jit->step_ = step;
    return jit;
  };
  auto set_code = [](FusedJit* jit, int v, std::unique_ptr<Code> code) { jit->code_[v] = std::move(code); };
  if (level == IsaLevel::kAvx512) return CompileFor<Xbyak::Zmm>(plan, level, make, set_code);
  return CompileFor<Xbyak::Ymm>(plan, level, make, set_code);
}

FusedJit::~FusedJit() = default;

int64_t FusedJit::code_bytes() const {
  int64_t n = 0;
  for (const auto& c : code_) n += c ? static_cast<int64_t>(c->gen->getSize()) : 0;
  return n;
}

void FusedJit::Run(const Args& args, Variant variant) const { code_[variant]->fn(&args); }

#else  // no Xbyak: never a kernel

struct FusedJit::Code {};

std::unique_ptr<FusedJit> FusedJit::Compile(const std::vector<VectorProgram::Op>&, int64_t,
                                            const std::vector<int64_t>&,
                                            const std::vector<VectorProgram::Slot>&, IsaLevel) {
  return nullptr;
}
FusedJit::~FusedJit() = default;
int64_t FusedJit::code_bytes() const { return 0; }
void FusedJit::Run(const Args&, Variant) const {}

#endif

}  // namespace hlox::rt
