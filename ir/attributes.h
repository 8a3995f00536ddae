// Typed instruction attributes for the HLO operations hlox models. Each struct mirrors the
// corresponding XLA text attribute; anything not modelled here is kept verbatim by the
// instruction (see Instruction::raw_attributes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/literal.h"

namespace hlox {

struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct WindowDimension {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0;
  int64_t base_dilation = 1, window_dilation = 1;
  bool reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dims;
  bool operator==(const Window&) const = default;
};

// dim_labels such as b01f_01io->b01f. Spatial vectors are in label order (0,1,2,...).
// A custom call may write '?' for a dimension no label names (?b01f_0?1io->b01?f).
struct ConvDimensionNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  // Label counts of the three sides when some are '?' (a dimension none of the labels names;
  // custom calls only); 0 when every dimension is labelled.
  int64_t input_rank = 0, kernel_rank = 0, output_rank = 0;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

struct PaddingDim {
  int64_t low = 0, high = 0, interior = 0;
  bool operator==(const PaddingDim&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };

enum class RandomDistribution : uint8_t { kUniform, kNormal };

// One entry of statistics={visualizing_index=N, name=value, ...}.
struct Statistic {
  std::string name;
  double value = 0;  // finite: the parser rejects inf, nan and overflow
  bool operator==(const Statistic&) const = default;
};

// XLA's StatisticsViz: the statistics tracked for an instruction and the one (0-based index
// into `statistics`) a graph viewer colours it by. Names may repeat, as in XLA.
struct StatisticsViz {
  int64_t visualizing_index = 0;
  std::vector<Statistic> statistics;
  bool operator==(const StatisticsViz&) const = default;
};

// One leaf of an original value: the instruction of the unoptimized module the array came
// from and the index of the array in that instruction's result ({} for the whole result).
struct OriginalArray {
  std::string instruction_name;
  std::vector<int64_t> shape_index;
  bool operator==(const OriginalArray&) const = default;
};

// XLA's OriginalValue (origin={...}, older dumps original_value={...}): a tree shaped like the
// instruction's result. A tuple node has one element per tuple element; an array leaf holds an
// OriginalArray, or nothing when written `{}`. `synthetic_call` is the tree-less form
// `{[synthetic_call]}` XLA gives values a call it made up produces.
struct OriginalValue {
  bool synthetic_call = false;
  bool is_tuple = false;
  std::vector<OriginalValue> elements;  // tuple nodes
  std::optional<OriginalArray> leaf;    // array leaves
  bool operator==(const OriginalValue&) const = default;
};

// The typed attribute bag of an instruction. Only the fields an opcode uses are meaningful;
// `has_*` style optionals say which were present in the text.
struct Attributes {
  std::vector<int64_t> dimensions;          // broadcast, reduce, transpose, reverse, concat, ...
  std::vector<SliceDim> slice;              // slice={[0:2:1], ...}
  std::vector<int64_t> dynamic_slice_sizes;
  std::optional<DotDimensionNumbers> dot;  // dot, ragged-dot, scaled-dot
  std::vector<int64_t> lhs_ragged_dims, rhs_group_dims;  // ragged-dot (roles: ir/ragged_dot.h)
  std::optional<Window> window;
  std::optional<ConvDimensionNumbers> conv;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::vector<PaddingDim> padding;          // pad's padding=0_0_0x1_2_0
  std::optional<GatherDimensionNumbers> gather;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDimensionNumbers> scatter;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<ComparisonDirection> comparison;
  std::string comparison_type;              // type=TOTALORDER etc., empty if absent
  int64_t tuple_index = 0;                  // get-tuple-element index=
  int64_t iota_dimension = 0;
  int64_t parameter_number = 0;
  std::optional<RandomDistribution> distribution;
  std::string rng_algorithm;                // rng-bit-generator algorithm=rng_default ...
  std::vector<std::vector<int64_t>> replica_groups;
  std::string replica_groups_text;          // iota form "[2,2]<=[4]" kept verbatim
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  std::string custom_call_target;
  std::string backend_config;               // unescaped bytes
  bool has_backend_config = false;
  FusionKind fusion_kind = FusionKind::kLoop;
  int64_t feature_index = 0;                // batch-norm
  float epsilon = 0;                        // batch-norm
  bool is_stable = false;                   // sort
  int64_t exponent_bits = 0, mantissa_bits = 0;  // reduce-precision
  // triangular-solve
  bool left_side = false, lower = false, unit_diagonal = false;
  std::string transpose_a;                  // NO_TRANSPOSE, TRANSPOSE, ADJOINT
  int64_t k = 0;                            // topk
  bool largest = true;                      // topk
  std::string fft_type;                     // FFT, IFFT, RFFT, IRFFT
  std::vector<int64_t> fft_length;
  // scan: dimensions={d} is the scanned dimension; the last num_carries operands are the
  // carries' initial values. is_associative is XLA's tri-state (unset: not stated).
  int64_t num_carries = 0;
  bool is_reverse = false;
  std::optional<bool> is_associative;
  // shuffle: mode=rotate with shifts={...} (one per entry of dimensions), or mode=permute with
  // indices=<integer literal> (for each result element, the operand coordinates of the
  // shuffled dimensions).
  std::string shuffle_mode;
  std::vector<int64_t> shuffle_shifts;
  std::optional<Literal> shuffle_indices;
  // collective-broadcast / collective-reduce: the last operand names the root at run time.
  bool has_dynamic_root = false;
  std::optional<StatisticsViz> statistics;      // statistics={...}, any opcode
  std::optional<OriginalValue> original_value;  // origin={...}, any opcode
};

std::string_view ComparisonDirectionName(ComparisonDirection d);
std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view s);
std::string_view FusionKindName(FusionKind k);
std::optional<FusionKind> ParseFusionKind(std::string_view s);

}  // namespace hlox
