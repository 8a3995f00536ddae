// FusedJit (see fused_jit.h): turns a VectorProgram's op list into values (each op one value;
// operands an input, a scalar or an earlier value), allocates zmm registers for every value of
// `unroll` 16-lane groups at once (4, else 2, else 1 when registers run out), and emits the loop.
#include "runtime/fused_jit.h"

#include <bit>
#include <cstdint>

#if defined(__AVX512F__) && defined(HLOX_HAVE_XBYAK)
#define HLOX_JIT 1
// GCC 12 reports false maybe-uninitialized warnings inside Eigen's packet code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop
#include <xbyak/xbyak.h>

#include "runtime/fused_vector_ops.h"
#include "runtime/vmath.h"
#endif

namespace hlox::rt {

#if defined(HLOX_JIT)
namespace {

using Xbyak::Zmm;
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

bool Unary(uint8_t code) { return code < vecops::kAdd || code >= vecops::kRoundBf16; }
bool Emits(uint8_t code) { return code != vecops::kLog && code != vecops::kRoundF16 && code <= vecops::kRoundF16; }

// The program as values.
struct Plan {
  std::vector<JitValue> values;
  std::vector<Ref> outputs;
  std::vector<int64_t> input_last_use;  // per input: last op reading it (kEnd: an output)
  int64_t inputs = 0;
};

// Constants the kernels read, as broadcast memory operands at kConst + 4 * index.
enum Const : int {
  kOne, kSign, kAbsMask, kZero,
  kExpHi, kExpLo, kLog2e, kLn2Hi, kLn2Lo, kP0, kP1, kP2, kP3, kP4,
  kTanhClamp, kTanhClampNeg, kTanhTiny,
  kA1, kA3, kA5, kA7, kA9, kA11, kA13, kB0, kB2, kB4, kB6,
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
  // Eigen 3.4's generic_fast_tanh_float (what ptanh<Packet16f> runs), constant for constant.
#ifdef EIGEN_VECTORIZE_FMA
  t[kTanhClamp] = Bits(7.99881172180175781f);
#else
  t[kTanhClamp] = Bits(7.90531110763549805f);
#endif
  t[kTanhClampNeg] = t[kTanhClamp] | 0x80000000u;
  t[kTanhTiny] = Bits(0.0004f);
  t[kA1] = Bits(4.89352455891786e-03f);
  t[kA3] = Bits(6.37261928875436e-04f);
  t[kA5] = Bits(1.48572235717979e-05f);
  t[kA7] = Bits(5.12229709037114e-08f);
  t[kA9] = Bits(-8.60467152213735e-11f);
  t[kA11] = Bits(2.00018790482477e-13f);
  t[kA13] = Bits(-2.76076847742355e-16f);
  t[kB0] = Bits(4.89352518554385e-03f);
  t[kB2] = Bits(2.26843463243900e-03f);
  t[kB4] = Bits(1.18534705686654e-04f);
  t[kB6] = Bits(1.19825839466702e-06f);
  t[kBf16One] = 1;
  t[kBf16Round] = 0x7fff;
  t[kBf16Hi] = 0xffff0000u;
  t[kBf16Quiet] = 0x400000;
  return t;
}

// Out of zmm registers at this unroll.
struct NoRegisters {};

// vcmpps predicates.
constexpr uint8_t kLtOq = 0x11, kGtOq = 0x1e, kUnordQ = 0x03;
// vrndscaleps immediates (rounding mode | suppress exceptions).
constexpr uint8_t kNear = 0x08, kDown = 0x09, kUp = 0x0a;

class Emitter : public Xbyak::CodeGenerator {
 public:
  Emitter(const Plan& plan, int unroll, FusedJit::Variant variant, size_t bytes)
      : Xbyak::CodeGenerator(bytes, Xbyak::DontSetProtectRWE), plan_(plan), unroll_(unroll) {
    Body(variant);
    ready();
    setProtectModeRE();  // written, now read and execute only
  }

 private:
  // General registers: the loop position (elements), its end, the scalars, the constants, and
  // one per stream (inputs, then outputs).
  const Xbyak::Reg64 pos_ = rax, end_ = rdx, scalars_ = rsi, consts_ = rcx;
  const Xbyak::Reg64 streams_[FusedJit::kMaxStreams] = {r10, r11, rbx, rbp, r12, r13, r14, r15};

  // Constant c broadcast to 16 lanes (a memory operand of an arithmetic op), or as one float
  // (for vbroadcastss).
  Xbyak::Address Cst(Const c) { return ptr_b[consts_ + 4 * static_cast<int>(c)]; }
  Xbyak::Address One(Const c) { return ptr[consts_ + 4 * static_cast<int>(c)]; }
  Xbyak::Address At(int stream, int u, int64_t ahead = 0) {
    return ptr[streams_[stream] + pos_ * 4 + static_cast<int>(64 * u + 4 * ahead)];
  }

  int Alloc() {
    if (free_ == 0) throw NoRegisters{};
    const int r = std::countr_zero(free_);
    free_ &= ~(1u << r);
    return r;
  }
  void Free(int r) { free_ |= 1u << r; }

  // The register holding ref r of group u, loading an input (kept to its last use) or
  // broadcasting a scalar (into a register the caller frees) as needed.
  int Operand(const Ref& r, int u, std::vector<int>* temps) {
    switch (r.kind) {
      case Ref::kValue: return value_reg_[r.index][u];
      case Ref::kScalar: {
        const int z = Alloc();
        vbroadcastss(Zmm(z), ptr[scalars_ + static_cast<int>(4 * r.index)]);
        temps->push_back(z);
        return z;
      }
      default: {
        int& z = input_reg_[r.index][u];
        if (z < 0) {
          z = Alloc();
          vmovups(Zmm(z), At(static_cast<int>(r.index), u));
        }
        return z;
      }
    }
  }

  void Body(FusedJit::Variant variant) {
    const int nin = static_cast<int>(plan_.inputs), nout = static_cast<int>(plan_.outputs.size());
    const int nvals = static_cast<int>(plan_.values.size());
    value_reg_.assign(nvals, std::vector<int>(unroll_, -1));
    input_reg_.assign(nin, std::vector<int>(unroll_, -1));
    Xbyak::Label loop, done, table;
    for (const Xbyak::Reg64& r : {rbx, rbp, r12, r13, r14, r15}) push(r);
    // Args: in, out, scalars, begin, end (fused_jit.h).
    mov(r8, ptr[rdi]);
    mov(r9, ptr[rdi + 8]);
    mov(scalars_, ptr[rdi + 16]);
    mov(pos_, ptr[rdi + 24]);
    mov(end_, ptr[rdi + 32]);
    lea(consts_, ptr[rip + table]);
    for (int s = 0; s < nin + nout; ++s) mov(streams_[s], ptr[(s < nin ? r8 : r9) + 8 * (s < nin ? s : s - nin)]);
    cmp(pos_, end_);
    jge(done, T_NEAR);
    align(16);
    L(loop);
    // One prefetch per input line of the group kPrefetchAhead elements on, spread over the ops.
    const int lines = variant == FusedJit::kCached ? 0 : nin * unroll_;
    int issued = 0;
    auto prefetch_upto = [&](int upto) {
      for (; issued < upto; ++issued) prefetcht0(At(issued % nin, issued / nin, FusedJit::kPrefetchAhead));
    };
    for (int j = 0; j < nvals; ++j) {
      const JitValue& v = plan_.values[j];
      for (int u = 0; u < unroll_; ++u) {
        std::vector<int> temps;
        const int a = Operand(v.a, u, &temps);
        const int b = Unary(v.code) ? a : Operand(v.b, u, &temps);
        const int d = Alloc();
        Op(v.code, d, a, b);
        value_reg_[j][u] = d;
        for (int z : temps) Free(z);
        for (const Ref& r : {v.a, v.b}) {
          if (r.kind == Ref::kValue && plan_.values[r.index].last_use == j && value_reg_[r.index][u] >= 0) {
            Free(value_reg_[r.index][u]);
            value_reg_[r.index][u] = -1;
          } else if (r.kind == Ref::kInput && plan_.input_last_use[r.index] == j && input_reg_[r.index][u] >= 0) {
            Free(input_reg_[r.index][u]);
            input_reg_[r.index][u] = -1;
          }
        }
        if (v.last_use < 0) {  // read by nothing (not expected from Build, but harmless)
          Free(d);
          value_reg_[j][u] = -1;
        }
      }
      prefetch_upto(((j + 1) * lines) / std::max(1, nvals));
    }
    prefetch_upto(lines);
    for (int k = 0; k < nout; ++k) {
      for (int u = 0; u < unroll_; ++u) {
        std::vector<int> temps;
        const int z = Operand(plan_.outputs[k], u, &temps);
        if (variant == FusedJit::kPrefetchStream) vmovntps(At(nin + k, u), Zmm(z));
        else vmovups(At(nin + k, u), Zmm(z));
        for (int t : temps) Free(t);
      }
    }
    add(pos_, 16 * unroll_);
    cmp(pos_, end_);
    jl(loop, T_NEAR);
    L(done);
    vzeroupper();
    for (const Xbyak::Reg64& r : {r15, r14, r13, r12, rbp, rbx}) pop(r);
    ret();
    align(64);
    L(table);
    for (uint32_t c : ConstTable()) dd(c);
  }

  // d = op(a, b), d distinct from a and b; scratch registers allocated and freed here.
  void Op(uint8_t code, int d, int a, int b) {
    const Zmm D(d), A(a), B(b);
    switch (code) {
      case vecops::kAdd: vaddps(D, A, B); break;
      case vecops::kSub: vsubps(D, A, B); break;
      case vecops::kMul: vmulps(D, A, B); break;
      case vecops::kDiv: vdivps(D, A, B); break;
      case vecops::kMax: MaxMin(D, A, B, kGtOq); break;
      case vecops::kMin: MaxMin(D, A, B, kLtOq); break;
      case vecops::kSqrt: vsqrtps(D, A); break;
      case vecops::kRsqrt: {  // 1 / sqrt(a), correctly rounded twice
        const Zmm T(Alloc());
        vsqrtps(T, A);
        vbroadcastss(D, One(kOne));
        vdivps(D, D, T);
        Free(T.getIdx());
        break;
      }
      case vecops::kAbs: vpandd(D, A, Cst(kAbsMask)); break;
      case vecops::kNeg: vpxord(D, A, Cst(kSign)); break;
      case vecops::kFloor: vrndscaleps(D, A, kDown); break;
      case vecops::kCeil: vrndscaleps(D, A, kUp); break;
      case vecops::kRoundEven: vrndscaleps(D, A, kNear); break;
      case vecops::kExp: Exp(D, A); break;
      case vecops::kTanh: Tanh(D, A); break;
      case vecops::kLogistic: Logistic(D, A); break;
      case vecops::kRoundBf16: RoundBf16(D, A); break;
      default: throw NoRegisters{};  // not reached: Compile checks Emits()
    }
  }

  // MaxNan16 / MinNan16: pick by the comparison (b on ties), then a where a is NaN, then b
  // where b is NaN.
  void MaxMin(const Zmm& D, const Zmm& A, const Zmm& B, uint8_t pred) {
    vcmpps(k1, A, B, pred);
    vblendmps(D | k1, B, A);
    vcmpps(k1, A, A, kUnordQ);
    vmovaps(D | k1, A);
    vcmpps(k1, B, B, kUnordQ);
    vmovaps(D | k1, B);
  }

  // vmath::Exp16.
  void Exp(const Zmm& D, const Zmm& X) {
    const Zmm T(Alloc()), N(Alloc()), R2(Alloc());
    vbroadcastss(T, One(kExpHi));
    vminps(T, T, X);  // min(hi, x): NaN x passes
    vbroadcastss(N, One(kExpLo));
    vmaxps(T, N, T);  // max(lo, t)
    vmulps(N, T, Cst(kLog2e));
    vrndscaleps(N, N, kNear);
    vfnmadd231ps(T, N, Cst(kLn2Hi));  // r = t - n * ln2hi - n * ln2lo
    vfnmadd231ps(T, N, Cst(kLn2Lo));
    vbroadcastss(D, One(kP4));  // P(r), Horner from P4
    vfmadd213ps(D, T, Cst(kP3));
    vfmadd213ps(D, T, Cst(kP2));
    vfmadd213ps(D, T, Cst(kP1));
    vfmadd213ps(D, T, Cst(kP0));
    vmulps(R2, T, T);
    vfmadd213ps(D, R2, T);  // r + r^2 P(r)
    vaddps(D, D, Cst(kOne));
    vscalefps(D, D, N);
    Free(T.getIdx()), Free(N.getIdx()), Free(R2.getIdx());
  }

  // Eigen's ptanh<Packet16f>: a rational function of x clamped to +-c, x itself where |x| is
  // tiny.
  void Tanh(const Zmm& D, const Zmm& A) {
    const Zmm X(Alloc()), X2(Alloc()), Q(Alloc());
    vbroadcastss(X, One(kTanhClamp));
    vminps(X, X, A);  // pmin(a, c) is vminps(c, a)
    vbroadcastss(Q, One(kTanhClampNeg));
    vmaxps(X, Q, X);
    vpandd(Q, A, Cst(kAbsMask));
    vcmpps(k2, Q, Cst(kTanhTiny), kLtOq);
    vmulps(X2, X, X);
    vbroadcastss(D, One(kA13));
    vfmadd213ps(D, X2, Cst(kA11));
    vfmadd213ps(D, X2, Cst(kA9));
    vfmadd213ps(D, X2, Cst(kA7));
    vfmadd213ps(D, X2, Cst(kA5));
    vfmadd213ps(D, X2, Cst(kA3));
    vfmadd213ps(D, X2, Cst(kA1));
    vmulps(D, X, D);
    vbroadcastss(Q, One(kB6));
    vfmadd213ps(Q, X2, Cst(kB4));
    vfmadd213ps(Q, X2, Cst(kB2));
    vfmadd213ps(Q, X2, Cst(kB0));
    vdivps(D, D, Q);
    vmovaps(D | k2, X);
    Free(X.getIdx()), Free(X2.getIdx()), Free(Q.getIdx());
  }

  // vmath::Logistic16: r = 1 / (1 + e) with e = exp(-|x|), times e where x < 0.
  void Logistic(const Zmm& D, const Zmm& A) {
    const Zmm T(Alloc()), E(Alloc());
    vpord(T, A, Cst(kSign));
    Exp(E, T);
    vbroadcastss(D, One(kOne));
    vaddps(T, D, E);
    vdivps(D, D, T);
    vcmpps(k1, A, Cst(kZero), kLtOq);
    vmulps(D | k1, D, E);
    Free(T.getIdx()), Free(E.getIdx());
  }

  // RoundBf16x16: nearest even to bf16 precision, NaN made quiet.
  void RoundBf16(const Zmm& D, const Zmm& A) {
    const Zmm T(Alloc());
    vpsrld(T, A, 16);
    vpandd(T, T, Cst(kBf16One));
    vpaddd(D, A, Cst(kBf16Round));
    vpaddd(D, D, T);
    vpandd(D, D, Cst(kBf16Hi));
    vpord(T, A, Cst(kBf16Quiet));
    vpandd(T, T, Cst(kBf16Hi));
    vcmpps(k1, A, A, kUnordQ);
    vmovdqa32(D | k1, T);
    Free(T.getIdx());
  }

  const Plan& plan_;
  const int unroll_;
  uint32_t free_ = 0xffffffffu;
  std::vector<std::vector<int>> value_reg_, input_reg_;
};

}  // namespace

struct FusedJit::Code {
  std::unique_ptr<Emitter> gen;
  void (*fn)(const Args*) = nullptr;
};

std::unique_ptr<FusedJit> FusedJit::Compile(const std::vector<VectorProgram::Op>& ops, int64_t inputs,
                                            const std::vector<int64_t>& scalar_temps,
                                            const std::vector<VectorProgram::Slot>& output_slots) {
  if (ops.empty() || output_slots.empty() || inputs < 1 ||
      inputs + static_cast<int64_t>(output_slots.size()) > kMaxStreams) {
    return nullptr;
  }
  // Temporaries hold a scalar until an op writes them; then that op's value.
  Plan plan;
  plan.inputs = inputs;
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
    v.b = Unary(op.code) ? v.a : ref(op.b);
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
  // Bytes: prologue, epilogue and constants, plus a generous bound per op and store.
  const size_t bytes = 4096 + 512 * 4 * (plan.values.size() + plan.outputs.size() + inputs);
  for (int unroll : {4, 2, 1}) {
    try {
      std::unique_ptr<FusedJit> jit(new FusedJit);
      for (int v = 0; v < 3; ++v) {
        auto code = std::make_unique<Code>();
        code->gen = std::make_unique<Emitter>(plan, unroll, static_cast<Variant>(v), bytes);
        code->fn = code->gen->getCode<void (*)(const Args*)>();
        jit->code_[v] = std::move(code);
      }
      jit->step_ = 16 * unroll;
      return jit;
    } catch (const NoRegisters&) {
      continue;  // fewer groups at once
    } catch (const Xbyak::Error&) {
      return nullptr;  // could not map executable memory, or an encoding the assembler refused
    }
  }
  return nullptr;
}

FusedJit::~FusedJit() = default;

int64_t FusedJit::code_bytes() const {
  int64_t n = 0;
  for (const auto& c : code_) n += c ? static_cast<int64_t>(c->gen->getSize()) : 0;
  return n;
}

void FusedJit::Run(const Args& args, Variant variant) const { code_[variant]->fn(&args); }

#else  // no AVX-512 or no Xbyak: never a kernel

struct FusedJit::Code {};

std::unique_ptr<FusedJit> FusedJit::Compile(const std::vector<VectorProgram::Op>&, int64_t,
                                            const std::vector<int64_t>&,
                                            const std::vector<VectorProgram::Slot>&) {
  return nullptr;
}
FusedJit::~FusedJit() = default;
int64_t FusedJit::code_bytes() const { return 0; }
void FusedJit::Run(const Args&, Variant) const {}

#endif

}  // namespace hlox::rt
