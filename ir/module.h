// An HLO module: the computations it owns (in text order), the entry computation and the
// header attributes. Also the module-wide name and id allocator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace hlox {

// One entry of the header's input_output_alias={ {out}: (param, {index}, kind) }: the entry's
// output at `output_index` may reuse (or must reuse) parameter `parameter_number`'s buffer at
// `parameter_index`. Shape indices are paths into tuples ({} is the whole value).
struct InputOutputAlias {
  std::vector<int64_t> output_index;
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
  bool must_alias = false;  // "must-alias"; "may-alias" (the default) otherwise
  bool operator==(const InputOutputAlias&) const = default;
};

// One entry of the header's buffer_donor={ (param, {index}) }.
struct BufferDonor {
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Adds a computation (appended to text order). Names made unique if taken.
  Computation* AddComputation(std::unique_ptr<Computation> c);
  // Removes a computation nobody calls. Returns false if it is the entry.
  bool RemoveComputation(Computation* c);
  const std::vector<std::unique_ptr<Computation>>& computations() const { return comps_; }
  Computation* FindComputation(std::string_view name) const;
  Computation* entry() const { return entry_; }
  void set_entry(Computation* c) { entry_ = c; }
  // Computations in dependency order: callees before callers, entry last.
  std::vector<Computation*> PostOrderComputations() const;
  // Removes computations unreachable from the entry. Returns how many were removed.
  int RemoveUnreachableComputations();

  // Header attributes after the module name (input_output_alias=..., entry_computation_layout=...).
  std::vector<RawAttribute>& header_attributes() { return header_; }
  const std::vector<RawAttribute>& header_attributes() const { return header_; }
  // The header's input_output_alias and buffer_donor entries, typed and checked against the
  // entry computation by the parser. The header attribute text stays in header_attributes()
  // and is what the printer writes.
  std::vector<InputOutputAlias>& input_output_aliases() { return aliases_; }
  const std::vector<InputOutputAlias>& input_output_aliases() const { return aliases_; }
  std::vector<BufferDonor>& buffer_donors() { return donors_; }
  const std::vector<BufferDonor>& buffer_donors() const { return donors_; }
  // Trailing tables of newer dumps (FileNames, FunctionNames, FileLocations, StackFrames), verbatim.
  std::string& trailer() { return trailer_; }
  const std::string& trailer() const { return trailer_; }

  // A name not yet used by any instruction or computation, derived from `prefix`.
  std::string UniqueName(std::string_view prefix);
  // Registers an existing name (the parser calls this so fresh names never collide).
  void ReserveName(const std::string& name) { names_.insert(name); }
  int64_t NextUniqueId() { return next_id_++; }

  int64_t InstructionCount() const;
  // Deep copy: same names, ids, attributes and text order.
  std::unique_ptr<Module> Clone() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> comps_;
  // Name index for FindComputation; a computation renamed later is found by a scan instead.
  std::unordered_map<std::string, Computation*> comp_index_;
  Computation* entry_ = nullptr;
  std::vector<RawAttribute> header_;
  std::vector<InputOutputAlias> aliases_;
  std::vector<BufferDonor> donors_;
  std::string trailer_;
  std::unordered_set<std::string> names_;
  int64_t next_id_ = 0;
  int64_t name_counter_ = 0;
};

// Instructions that do work: every instruction of the entry and of computations reached
// through call/while/conditional (not fusion bodies or to_apply reducers), excluding parameter,
// constant, tuple and get-tuple-element. A fusion counts once. The op-count reward and the
// analytical cost's op count.
int64_t OpCount(const Module& module);

}  // namespace hlox
