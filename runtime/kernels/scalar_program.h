// A tiny interpreter for scalar computations (sort comparators, reducers, scatter updates):
// when every instruction of a computation is a rank-0 op it knows (fusions and calls of such
// computations inlined, tuples of scalars taken apart), the computation is compiled
// once to a flat program evaluated on registers, about a hundred times faster than calling the
// executor per element. Values follow XLA's semantics per element type: floats (the f8 family
// and f4e2m1fn included, held decoded) round to their type after every op, integers wrap to their width, bitcast-convert moves raw bits.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/core/value.h"

namespace hlox::rt {

// One scalar register: floats in f (already rounded to their type), ints/pred in i
// (sign- or zero-extended to 64 bits).
struct SVal {
  double f = 0;
  int64_t i = 0;
};

class ScalarProgram {
 public:
  // Compiles `comp`; nullopt when it uses an op, shape or type the interpreter does not handle.
  static std::optional<ScalarProgram> Compile(const Computation& comp);
  // Evaluates with one SVal per parameter; returns one SVal per result leaf (root tuple
  // elements, or the root itself).
  void Run(const SVal* params, SVal* results, std::vector<SVal>& scratch) const;
  int64_t result_count() const { return static_cast<int64_t>(results_.size()); }
  PrimitiveType result_type(int64_t i) const { return result_types_[i]; }

 private:
  struct Node {
    Opcode op;
    PrimitiveType type;      // result type
    PrimitiveType in_type;   // type of operand 0
    int a = -1, b = -1, c = -1;
    int param = -1;
    SVal constant;
    ComparisonDirection dir = ComparisonDirection::kEq;
    bool total_order = false;
  };
  std::optional<std::vector<int>> CompileInto(const Computation& comp, const std::vector<std::vector<int>>* args,
                                              int depth);

  std::vector<Node> nodes_;
  std::vector<int> results_;
  std::vector<PrimitiveType> result_types_;
};

// Loads element i of an array buffer into an SVal / stores an SVal into element i.
SVal LoadSVal(const Buffer& b, int64_t i);
void StoreSVal(Buffer& b, int64_t i, const SVal& v);

}  // namespace hlox::rt
