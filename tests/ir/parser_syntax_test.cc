// One test per syntax form real HLO dumps contain: names, operands, comments, strings,
// layouts, literals, module/computation structure and the typed attributes. Expected values
// are written out by hand from the text, then every module is also round-tripped.
#include <bit>
#include <cmath>

#include "gtest/gtest.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

// Golden rule: print(parse(x)) re-parses to the same module, and printing is stable.
std::unique_ptr<Module> Parse(const std::string& text) { return testing_ir::ParseRoundTrip(text); }

const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

TEST(ParserSyntax, PercentAndBareNamesTypedAndUntypedOperands) {
  auto m = Parse(R"(HloModule m
ENTRY %e (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  q = f32[2]{0} negate(p)
  ROOT %r = f32[2]{0} add(f32[2]{0} %p, q)
})");
  ASSERT_TRUE(m);
  const Instruction* r = Find(*m, "r");
  ASSERT_EQ(r->operand_count(), 2);
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_EQ(r->operand(1)->name(), "q");
  EXPECT_EQ(m->entry()->root(), r);
  ASSERT_EQ(m->entry()->header_params().size(), 1u);
  EXPECT_EQ(m->entry()->header_params()[0].first, "p");
  EXPECT_EQ(m->entry()->header_result()->ToString(), "f32[2]");
}

TEST(ParserSyntax, NamesEqualToOpcodes) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  add = f32[] parameter(0)
  multiply = f32[] parameter(1)
  ROOT tuple = f32[] add(add, multiply)
})");
  ASSERT_TRUE(m);
  const Instruction* t = Find(*m, "tuple");
  EXPECT_EQ(t->opcode(), Opcode::kAdd);
  EXPECT_EQ(t->operand(1)->name(), "multiply");
}

TEST(ParserSyntax, IndexCommentsLeadingCommentsAndIndentedHeader) {
  auto m = Parse(R"(// a leading comment
    HloModule m, entry_computation_layout={(f32[], /*index=1*/f32[])->f32[]}

// between computations
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT t = (f32[], /*index=1*/f32[]) tuple(a, /*index=1*/b)
} // e
)");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->header_attributes().size(), 1u);
  EXPECT_EQ(m->header_attributes()[0].key, "entry_computation_layout");
  EXPECT_EQ(m->header_attributes()[0].value, "{(f32[], /*index=1*/f32[])->f32[]}");
  EXPECT_EQ(Find(*m, "t")->shape().tuple_size(), 2);
}

TEST(ParserSyntax, StringEscapesAndOctalBackendConfig) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} custom-call(a), custom_call_target="foo\"bar", backend_config="\001\000\377x\n\\"
})");
  ASSERT_TRUE(m);
  const Instruction* c = Find(*m, "c");
  EXPECT_EQ(c->attrs().custom_call_target, "foo\"bar");
  EXPECT_TRUE(c->attrs().has_backend_config);
  EXPECT_EQ(c->attrs().backend_config, std::string("\x01\x00\xffx\n\\", 6));
}

TEST(ParserSyntax, UnquotedJsonBackendConfig) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} custom-call(a), custom_call_target="t", backend_config={"k":{"x":1}}
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "c")->attrs().backend_config, R"({"k":{"x":1}})");
}

TEST(ParserSyntax, LongMetadataShardingFrontendAttributesKeptRawInOrder) {
  std::string long_name(5000, 'z');
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT a = f32[4]{0} parameter(0), sharding={devices=[2]0,1}, metadata={op_name=")" + long_name +
                 R"(" source_line=3}, frontend_attributes={_xla_x="a,b"}
})");
  ASSERT_TRUE(m);
  const auto& raw = Find(*m, "a")->raw_attributes();
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(raw[0].key, "sharding");
  EXPECT_EQ(raw[0].value, "{devices=[2]0,1}");
  EXPECT_EQ(raw[1].key, "metadata");
  EXPECT_EQ(raw[1].value.size(), long_name.size() + 26);
  EXPECT_EQ(raw[2].value, R"({_xla_x="a,b"})");
}

TEST(ParserSyntax, TiledAndDynamicLayouts) {
  auto s = ParseShape("f32[<=8,128]{1,0:T(8,128)(2,1)E(32)}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dims(), (std::vector<int64_t>{8, 128}));
  EXPECT_TRUE(s->is_dynamic_dim(0));
  EXPECT_FALSE(s->is_dynamic_dim(1));
  ASSERT_TRUE(s->has_layout());
  EXPECT_EQ(s->layout()->minor_to_major, (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(s->layout()->tiles.size(), 2u);
  EXPECT_EQ(s->layout()->tiles[0].dims, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(s->layout()->tiles[1].dims, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s->layout()->element_size_in_bits, 32);
  EXPECT_EQ(s->ToString(), "f32[<=8,128]{1,0:T(8,128)(2,1)E(32)}");  // XLA's spelling
  auto again = ParseShape(s->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *s);
  auto t = ParseShape("(s32[], (pred[3]{0}, token[]))");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tuple_size(), 2);
  EXPECT_TRUE(t->tuple_shape(1).tuple_shape(1).IsToken());
  auto star = ParseShape("bf16[16]{0:T(*,128)}");
  ASSERT_TRUE(star.ok()) << star.status();
  EXPECT_EQ(star->layout()->tiles[0].dims, (std::vector<int64_t>{-1, 128}));
}

TEST(ParserSyntax, ConstantsScalarsArraysTuplesElidedSpecialFloats) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,3]{1,0} constant({ {1, 2.5, -3}, {4e3, nan, -inf} })
  b = (s32[], f32[2]{0}) constant((7, {inf, -0}))
  c = f32[1000]{0} constant({...})
  d = pred[3]{0} constant({true, false, 1})
  e = bf16[] constant(0.1)
  f = f16[] constant(-nan)
  g = c64[2]{0} constant({(1, -2), (0.5, 3)})
  h = u64[] constant(18446744073709551615)
  i = s8[0]{0} constant({})
  j = (s32[], f32[2]{0}) constant((s32[] 1, f32[2]{0} {2, 3}))
  k = f32[3]{0} constant({ ... })
  ROOT t = (f32[2,3]{1,0}) tuple(a)
})");
  ASSERT_TRUE(m);
  const Literal& a = Find(*m, "a")->literal();
  EXPECT_EQ(a.Get<float>(1), 2.5f);
  EXPECT_EQ(a.Get<float>(3), 4000.0f);
  EXPECT_TRUE(std::isnan(a.Get<float>(4)));
  EXPECT_EQ(a.Get<float>(5), -INFINITY);
  const Literal& b = Find(*m, "b")->literal();
  ASSERT_EQ(b.tuple_elements().size(), 2u);
  EXPECT_EQ(b.tuple_elements()[0].Get<int32_t>(0), 7);
  EXPECT_EQ(b.tuple_elements()[1].Get<float>(0), INFINITY);
  EXPECT_TRUE(std::signbit(b.tuple_elements()[1].Get<float>(1)));
  EXPECT_TRUE(Find(*m, "c")->literal().elided());
  EXPECT_EQ(Find(*m, "d")->literal().Get<uint8_t>(2), 1);
  EXPECT_EQ(Find(*m, "e")->literal().Get<uint16_t>(0), 0x3dcd);  // bf16(0.1), round to nearest even
  uint16_t f = Find(*m, "f")->literal().Get<uint16_t>(0);
  EXPECT_EQ(f & 0x7c00, 0x7c00);
  EXPECT_NE(f & 0x3ff, 0);
  EXPECT_NE(f & 0x8000, 0);
  EXPECT_EQ(Find(*m, "g")->literal().GetAsComplex(0), std::complex<double>(1, -2));
  EXPECT_EQ(Find(*m, "h")->literal().Get<uint64_t>(0), 18446744073709551615ull);
  EXPECT_EQ(PrintLiteral(a), "{{1, 2.5, -3}, {4000, nan, -inf}}");
  EXPECT_EQ(Find(*m, "j")->literal().tuple_elements()[1].Get<float>(1), 3.0f);
  EXPECT_TRUE(Find(*m, "k")->literal().elided());
  EXPECT_EQ(PrintLiteral(Find(*m, "k")->literal()), "{...}");
}

TEST(ParserSyntax, FloatsPrintShortestAndRoundTripBitExactly) {
  // A spread of awkward values; the printed text must re-parse to the same bits.
  const float values[] = {0.1f, 1.0f / 3, 3.4028235e38f, 1.17549435e-38f, 1e-45f, -2.7182817f, 16777217.0f};
  std::string list;
  for (float v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
  Literal lit(Shape(PrimitiveType::kF32, {7}));
  for (int i = 0; i < 7; ++i) lit.SetFromDouble(i, values[i]);
  std::string text = "HloModule m\nENTRY e {\n  ROOT c = f32[7]{0} constant(" + PrintLiteral(lit) + ")\n}\n";
  auto m = Parse(text);
  ASSERT_TRUE(m);
  const Literal& back = Find(*m, "c")->literal();
  for (int i = 0; i < 7; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(back.Get<float>(i)), std::bit_cast<uint32_t>(values[i]));
  EXPECT_EQ(PrintLiteral(lit).substr(0, 5), "{0.1,");
  // f16 and bf16 print through float and come back bit-exact for every non-NaN pattern.
  for (PrimitiveType t : {PrimitiveType::kF16, PrimitiveType::kBF16}) {
    Literal all(Shape(t, {65536}));
    for (int i = 0; i < 65536; ++i) std::memcpy(all.data() + 2 * i, &i, 2);
    std::string txt = std::string("HloModule m\nENTRY e {\n  ROOT c = ") + std::string(PrimitiveTypeName(t)) +
                      "[65536]{0} constant(" + PrintLiteral(all) + ")\n}\n";
    auto mm = ParseModule(txt);
    ASSERT_TRUE(mm.ok()) << mm.status();
    const Literal& got = (*mm)->entry()->root()->literal();
    int mismatches = 0;
    for (int i = 0; i < 65536; ++i) mismatches += got.Get<uint16_t>(i) != static_cast<uint16_t>(i);
    EXPECT_EQ(mismatches, 0) << PrimitiveTypeName(t);
  }
}

TEST(ParserSyntax, RootNotLastUseBeforeDefAndComputationsDefinedLater) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT r = f32[] call(x), to_apply=later
  x = f32[] negate(p)
  p = f32[] parameter(0)
}
later {
  ROOT q = f32[] parameter(0)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->name(), "e");
  EXPECT_EQ(m->entry()->root()->name(), "r");
  EXPECT_EQ(Find(*m, "r")->to_apply()->name(), "later");
  EXPECT_EQ(Find(*m, "x")->operand(0)->name(), "p");
}

TEST(ParserSyntax, NoEntryKeywordMeansLastComputation) {
  auto m = Parse("HloModule m\nfirst {\n ROOT a = f32[] parameter(0)\n}\nsecond {\n ROOT b = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->name(), "second");
}

TEST(ParserSyntax, WhileConditionalSelectAndScatterRoles) {
  auto m = Parse(R"(HloModule m
cond { p = s32[] parameter(0)
  ROOT lt = pred[] compare(p, p), direction=LT, type=SIGNED }
body { ROOT p = s32[] parameter(0) }
b0 { ROOT p = s32[] parameter(0) }
b1 { ROOT p = s32[] parameter(0) }
b2 { ROOT p = s32[] parameter(0) }
ENTRY e {
  i = s32[] parameter(0)
  pr = pred[] parameter(1)
  w = s32[] while(i), body=body, condition=cond
  c1 = s32[] conditional(pr, i, i), false_computation=b1, true_computation=b0
  ROOT c2 = s32[] conditional(i, i, i, w), branch_computations={b0, b1, b2}
})");
  ASSERT_TRUE(m);
  const Instruction* w = Find(*m, "w");
  ASSERT_EQ(w->called_computations().size(), 2u);
  EXPECT_EQ(w->called_computations()[0]->name(), "cond");
  EXPECT_EQ(w->called_computations()[1]->name(), "body");
  const Instruction* c1 = Find(*m, "c1");
  EXPECT_EQ(c1->called_computations()[0]->name(), "b0");
  EXPECT_EQ(c1->called_computations()[1]->name(), "b1");
  EXPECT_EQ(Find(*m, "c2")->called_computations().size(), 3u);
  const Instruction* lt = Find(*m, "lt");
  EXPECT_EQ(lt->attrs().comparison, ComparisonDirection::kLt);
  EXPECT_EQ(lt->attrs().comparison_type, "SIGNED");
}

TEST(ParserSyntax, ControlPredecessorsFusionAndTrailerTables) {
  auto m = Parse(R"(HloModule m
fused { ROOT p = f32[] parameter(0) }
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  ROOT f = f32[] fusion(a), kind=kInput, calls=fused, control-predecessors={b}
}

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}
StackFrames
1 {file_location_id=1 parent_frame_id=1}
)");
  ASSERT_TRUE(m);
  const Instruction* f = Find(*m, "f");
  ASSERT_EQ(f->control_predecessors().size(), 1u);
  EXPECT_EQ(f->control_predecessors()[0]->name(), "b");
  EXPECT_EQ(f->attrs().fusion_kind, FusionKind::kInput);
  EXPECT_TRUE(m->FindComputation("fused")->is_fusion_computation());
  EXPECT_EQ(m->trailer().substr(0, 9), "FileNames");
  EXPECT_NE(m->trailer().find("parent_frame_id=1}"), std::string::npos);
}

TEST(ParserSyntax, ConvolutionWindowDimLabelsAndGroups) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,4]{3,2,1,0} parameter(0)
  k = f32[4,3,3,8]{3,2,1,0} parameter(1)
  ROOT c = f32[1,4,8,8]{3,2,1,0} convolution(x, k), window={size=3x3 stride=2x1 pad=0_1x-1_2 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}, dim_labels=b01f_i01o->bf01, feature_group_count=2, batch_group_count=1
})");
  ASSERT_TRUE(m);
  const Attributes& a = Find(*m, "c")->attrs();
  ASSERT_TRUE(a.window);
  ASSERT_EQ(a.window->dims.size(), 2u);
  const WindowDimension& d0 = a.window->dims[0];
  const WindowDimension& d1 = a.window->dims[1];
  EXPECT_EQ(d0.size, 3);
  EXPECT_EQ(d0.stride, 2);
  EXPECT_EQ(d0.pad_low, 0);
  EXPECT_EQ(d0.pad_high, 1);
  EXPECT_EQ(d1.pad_low, -1);
  EXPECT_EQ(d1.pad_high, 2);
  EXPECT_EQ(d1.base_dilation, 2);
  EXPECT_EQ(d0.window_dilation, 3);
  EXPECT_FALSE(d0.reversal);
  EXPECT_TRUE(d1.reversal);
  ASSERT_TRUE(a.conv);
  EXPECT_EQ(a.conv->input_batch, 0);
  EXPECT_EQ(a.conv->input_feature, 3);
  EXPECT_EQ(a.conv->input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.conv->kernel_input_feature, 0);
  EXPECT_EQ(a.conv->kernel_output_feature, 3);
  EXPECT_EQ(a.conv->kernel_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.conv->output_feature, 1);
  EXPECT_EQ(a.conv->output_spatial, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.feature_group_count, 2);
}

TEST(ParserSyntax, DotSlicePadGatherScatterAttributes) {
  auto m = Parse(R"(HloModule m
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[2,3,4]{2,1,0} parameter(0)
  y = f32[2,4,5]{2,1,0} parameter(1)
  i = s32[6,1]{1,0} parameter(2)
  z = f32[] parameter(3)
  d = f32[2,3,5]{2,1,0} dot(x, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  sl = f32[1,3,2]{2,1,0} slice(x), slice={[1:2], [0:3], [0:4:2]}
  p = f32[2,8,4]{2,1,0} pad(x, z), padding=0_0x1_-2_3x0_0
  g = f32[6,3,4]{2,1,0} gather(x, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3,4}, indices_are_sorted=true
  ROOT sc = f32[2,3,4]{2,1,0} scatter(x, i, g), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
})");
  ASSERT_TRUE(m);
  const Attributes& d = Find(*m, "d")->attrs();
  ASSERT_TRUE(d.dot);
  EXPECT_EQ(d.dot->lhs_contracting, (std::vector<int64_t>{2}));
  EXPECT_EQ(d.dot->rhs_contracting, (std::vector<int64_t>{1}));
  const Attributes& s = Find(*m, "sl")->attrs();
  ASSERT_EQ(s.slice.size(), 3u);
  EXPECT_EQ(s.slice[0], (SliceDim{1, 2, 1}));
  EXPECT_EQ(s.slice[2], (SliceDim{0, 4, 2}));
  const Attributes& p = Find(*m, "p")->attrs();
  ASSERT_EQ(p.padding.size(), 3u);
  EXPECT_EQ(p.padding[1], (PaddingDim{1, -2, 3}));
  const Attributes& g = Find(*m, "g")->attrs();
  ASSERT_TRUE(g.gather);
  EXPECT_EQ(g.gather->offset_dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(g.gather->index_vector_dim, 1);
  EXPECT_EQ(g.gather_slice_sizes, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_TRUE(g.indices_are_sorted);
  const Attributes& sc = Find(*m, "sc")->attrs();
  ASSERT_TRUE(sc.scatter);
  EXPECT_EQ(sc.scatter->scatter_dims_to_operand_dims, (std::vector<int64_t>{0}));
  EXPECT_TRUE(sc.unique_indices);
  EXPECT_EQ(Find(*m, "sc")->to_apply()->name(), "add");
}

TEST(ParserSyntax, CollectivesRngAndMiscAttributes) {
  auto m = Parse(R"(HloModule m
sum { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4]{0} parameter(0)
  st = u64[2]{0} parameter(1)
  ar = f32[4]{0} all-reduce(x), replica_groups={{0,1},{2,3}}, channel_id=5, use_global_device_ids=true, to_apply=sum
  ag = f32[8]{0} all-gather(x), replica_groups=[2,2]<=[4], dimensions={0}
  rb = (u64[2]{0}, u32[4]{0}) rng-bit-generator(st), algorithm=rng_philox
  it = s32[4,2]{1,0} iota(), iota_dimension=1
  gte = u32[4]{0} get-tuple-element(rb), index=1
  bn = f32[4]{0} reduce-precision(x), exponent_bits=5, mantissa_bits=10
  r = f32[4]{0} rng(x, x), distribution=rng_normal
  ROOT t = (f32[4]{0}, f32[8]{0}) tuple(ar, ag)
})");
  ASSERT_TRUE(m);
  const Attributes& ar = Find(*m, "ar")->attrs();
  EXPECT_EQ(ar.replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ar.channel_id, 5);
  EXPECT_TRUE(ar.use_global_device_ids);
  EXPECT_EQ(Find(*m, "ag")->attrs().replica_groups_text, "[2,2]<=[4]");
  EXPECT_EQ(Find(*m, "rb")->attrs().rng_algorithm, "rng_philox");
  EXPECT_EQ(Find(*m, "it")->attrs().iota_dimension, 1);
  EXPECT_EQ(Find(*m, "gte")->tuple_index(), 1);
  EXPECT_EQ(Find(*m, "bn")->attrs().mantissa_bits, 10);
  EXPECT_EQ(Find(*m, "r")->attrs().distribution, RandomDistribution::kNormal);
}

TEST(ParserSyntax, BatchNormSortTriangularSolveTopkFft) {
  auto m = Parse(R"(HloModule m
lt { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[2,4]{1,0} parameter(0)
  s = f32[4]{0} parameter(1)
  bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(x, s, s), epsilon=0.001, feature_index=1
  so = f32[2,4]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt
  a = f32[4,4]{1,0} parameter(2)
  ts = f32[4,4]{1,0} triangular-solve(a, a), left_side=true, lower=true, unit_diagonal=false, transpose_a=TRANSPOSE
  tk = (f32[2,2]{1,0}, s32[2,2]{1,0}) topk(x), k=2, largest=false
  c = c64[4]{0} parameter(3)
  ROOT f = c64[4]{0} fft(c), fft_type=IFFT, fft_length={4}
})");
  ASSERT_TRUE(m);
  const Attributes& bn = Find(*m, "bn")->attrs();
  EXPECT_EQ(bn.epsilon, 0.001f);
  EXPECT_EQ(bn.feature_index, 1);
  EXPECT_TRUE(Find(*m, "so")->attrs().is_stable);
  const Attributes& ts = Find(*m, "ts")->attrs();
  EXPECT_TRUE(ts.left_side);
  EXPECT_TRUE(ts.lower);
  EXPECT_EQ(ts.transpose_a, "TRANSPOSE");
  EXPECT_EQ(Find(*m, "tk")->attrs().k, 2);
  EXPECT_FALSE(Find(*m, "tk")->attrs().largest);
  EXPECT_EQ(Find(*m, "f")->attrs().fft_type, "IFFT");
  EXPECT_EQ(Find(*m, "f")->attrs().fft_length, (std::vector<int64_t>{4}));
}

TEST(ParserSyntax, SignatureWithTupleParamsAndBareComputation) {
  auto m = Parse(R"(HloModule m
%c (p: (f32[], s32[2]{0})) -> f32[] {
  %p = (f32[], s32[2]{0}) parameter(0)
  ROOT %g = f32[] get-tuple-element(%p), index=0
}
ENTRY main {
  a = (f32[], s32[2]{0}) parameter(0)
  ROOT r = f32[] call(a), to_apply=%c
})");
  ASSERT_TRUE(m);
  const Computation* c = m->FindComputation("c");
  ASSERT_EQ(c->header_params().size(), 1u);
  EXPECT_EQ(c->header_params()[0].second.ToString(), "(f32[], s32[2]{0})");
  EXPECT_FALSE(m->entry()->header_result().has_value());
  EXPECT_EQ(m->entry()->parameter_count(), 1);
}

TEST(ParserSyntax, PrinterOmitsMetadataAndElidesLargeConstantsOnRequest) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT c = f32[20]{0} constant({0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19}), metadata={op_name="x"}
})");
  ASSERT_TRUE(m);
  PrintOptions opts;
  opts.print_metadata = false;
  opts.print_large_constants = false;
  std::string text = PrintModule(*m, opts);
  EXPECT_EQ(text.find("metadata"), std::string::npos);
  EXPECT_NE(text.find("constant({...})"), std::string::npos);
  EXPECT_NE(PrintModule(*m).find("19})"), std::string::npos);
}

}  // namespace
}  // namespace hlox
