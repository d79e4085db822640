// TextParser on hand-written generic-form text: every construct JAX programs contain.
#include "xla_plugin/stablehlo/text_parser.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

// A module in the form ToGenericText prints: #loc aliases before and after, properties,
// attributes, regions with block arguments, multi-result values, func.call.
constexpr char kProgram[] = R"mlir(#loc1 = loc("x")
#loc7 = loc("while")
"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{jax.arg_info = "x", mhlo.sharding = "{replicated}"}, {}], function_type = (tensor<3x4xf32>, tensor<i32>) -> (tensor<3x4xf32>, tensor<i32>), res_attrs = [{jax.result_info = "result[0]"}, {}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32> loc("x"), %arg1: tensor<i32> loc(unknown)):
    %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32> loc(#loc2)
    %c = "stablehlo.constant"() <{value = dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32> loc(#loc)
    %1:2 = "stablehlo.while"(%arg1, %arg0) ({
    ^bb0(%arg2: tensor<i32> loc("while:"(#loc7)), %arg3: tensor<3x4xf32> loc("while:"(#loc7))):
      %2 = "stablehlo.compare"(%arg2, %arg1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc3)
      "stablehlo.return"(%2) : (tensor<i1>) -> () loc(#loc3)
    }, {
    ^bb0(%arg2: tensor<i32> loc("while:"(#loc7)), %arg3: tensor<3x4xf32> loc("while:"(#loc7))):
      %3 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32> loc(#loc4)
      %4 = "stablehlo.add"(%arg3, %3) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc4)
      "stablehlo.return"(%arg2, %4) : (tensor<i32>, tensor<3x4xf32>) -> () loc(#loc4)
    }) : (tensor<i32>, tensor<3x4xf32>) -> (tensor<i32>, tensor<3x4xf32>) loc(#loc3)
    %5 = "func.call"(%1#1) <{callee = @helper}> {mhlo.frontend_attributes = {inlineable = "xla_late"}} : (tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc5)
    "func.return"(%5, %1#0) : (tensor<3x4xf32>, tensor<i32>) -> () loc(#loc)
  }) : () -> () loc(#loc)
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "helper", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xf32> loc(unknown)):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 1, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x4xf32>) -> tensor<1x4xf32> loc(#loc)
    %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32> loc(#loc)
    %1 = "stablehlo.case"(%c0) ({
      "stablehlo.return"(%arg0) : (tensor<3x4xf32>) -> () loc(#loc)
    }) : (tensor<i32>) -> tensor<3x4xf32> loc(#loc)
    "func.return"(%arg0) : (tensor<3x4xf32>) -> () loc(#loc)
  }) : () -> () loc(#loc)
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> () loc(#loc)
#loc = loc(unknown)
#loc2 = loc("/src/f.py":12:3 to :20)
#loc3 = loc("jit(f)/while"(#loc6))
#loc4 = loc("jit(f)/while/body/add"(#loc8))
#loc5 = loc(callsite(#loc9 at #loc2))
#loc6 = loc(callsite("<lambda>"("/src/f.py":7:10) at "<module>"("/src/f.py":20:1)))
#loc8 = loc(fused["a", "/src/g.py":1:2])
#loc9 = loc("jit(f)/jit(helper)")
)mlir";

std::string Program() { return kProgram; }

std::vector<std::string> OpNames(const Block& block) {
  std::vector<std::string> names;
  for (const Operation& op : block.operations) names.push_back(op.name);
  return names;
}

TEST(TextParserTest, ReadsModuleFunctionsAndOps) {
  StatusOr<Module> parsed = TextParser::Parse(Program());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Module& module = *parsed;
  EXPECT_EQ(module.name, "jit_f");
  ASSERT_EQ(module.attributes.size(), 2u);
  EXPECT_EQ(module.attributes[0].name, "mhlo.num_partitions");
  EXPECT_EQ(module.attributes[0].value.kind, Attribute::Kind::kInteger);
  EXPECT_EQ(module.attributes[0].value.int_value, 1);
  EXPECT_EQ(module.attributes[0].value.type.ToString(), "i32");
  ASSERT_EQ(module.functions.size(), 2u);
  EXPECT_TRUE(module.other_operations.empty());

  const Function& main = module.functions[0];
  EXPECT_EQ(main.name, "main");
  EXPECT_TRUE(main.is_public);
  ASSERT_EQ(main.argument_types.size(), 2u);
  EXPECT_EQ(main.argument_types[0].ToString(), "tensor<3x4xf32>");
  EXPECT_EQ(main.argument_types[1].ToString(), "tensor<i32>");
  ASSERT_EQ(main.result_types.size(), 2u);
  ASSERT_EQ(main.argument_attributes.size(), 2u);
  ASSERT_EQ(main.argument_attributes[0].size(), 2u);
  EXPECT_EQ(FindAttribute(main.argument_attributes[0], "mhlo.sharding")->string_value,
            "{replicated}");
  EXPECT_TRUE(main.argument_attributes[1].empty());
  EXPECT_EQ(FindAttribute(main.result_attributes[0], "jax.result_info")->string_value,
            "result[0]");
  EXPECT_TRUE(main.attributes.empty());

  ASSERT_EQ(main.body.blocks.size(), 1u);
  const Block& entry = main.body.blocks[0];
  EXPECT_EQ(entry.arguments, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(OpNames(entry),
            (std::vector<std::string>{"stablehlo.constant", "stablehlo.constant", "stablehlo.while",
                                      "func.call", "func.return"}));
  const Operation& loop = entry.operations[2];
  EXPECT_EQ(loop.operands, (std::vector<ValueId>{1, 0}));
  ASSERT_EQ(loop.results.size(), 2u);
  EXPECT_EQ(main.value_names[loop.results[1]], "1#1");
  EXPECT_EQ(main.value_types[loop.results[1]].ToString(), "tensor<3x4xf32>");
  ASSERT_EQ(loop.regions.size(), 2u);
  const Block& cond = loop.regions[0].blocks[0];
  EXPECT_EQ(OpNames(cond), (std::vector<std::string>{"stablehlo.compare", "stablehlo.return"}));
  // The region's compare uses %arg1 from the function: values of nested regions share the table.
  EXPECT_EQ(cond.operations[0].operands[1], 1);
  EXPECT_EQ(cond.operations[0].Find("comparison_direction")->text,
            "#stablehlo<comparison_direction LT>");
  EXPECT_EQ(cond.operations[0].Find("comparison_direction")->mnemonic, "comparison_direction");
  const Block& body = loop.regions[1].blocks[0];
  // The body's %arg2 is a new value although the cond region used the same name.
  EXPECT_NE(body.arguments[0], cond.arguments[0]);
  const Operation& call = entry.operations[3];
  EXPECT_EQ(call.operands, (std::vector<ValueId>{loop.results[1]}));
  ASSERT_EQ(call.attributes.size(), 2u);
  EXPECT_EQ(call.Find("callee")->kind, Attribute::Kind::kSymbolRef);
  EXPECT_EQ(call.Find("callee")->string_value, "helper");
  EXPECT_EQ(call.Find("mhlo.frontend_attributes")->Find("inlineable")->string_value, "xla_late");
  const Operation& ret = entry.operations[4];
  EXPECT_EQ(ret.operands, (std::vector<ValueId>{call.results[0], loop.results[0]}));

  const Function* helper = module.FindFunction("helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_public);
  EXPECT_EQ(helper->argument_attributes.size(), 1u);
  const Operation& slice = helper->body.blocks[0].operations[0];
  EXPECT_EQ(slice.Find("limit_indices")->ints, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(slice.Find("limit_indices")->type.ToString(), "i64");
  // The case region has no block header: one block without arguments.
  const Operation& branch = helper->body.blocks[0].operations[2];
  ASSERT_EQ(branch.regions.size(), 1u);
  ASSERT_EQ(branch.regions[0].blocks.size(), 1u);
  EXPECT_TRUE(branch.regions[0].blocks[0].arguments.empty());
  EXPECT_EQ(module.FindFunction("nope"), nullptr);
}

TEST(TextParserTest, ResolvesLocations) {
  StatusOr<Module> parsed = TextParser::Parse(Program());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Block& entry = parsed->functions[0].body.blocks[0];
  EXPECT_EQ(entry.operations[0].location.text, "/src/f.py:12:3");
  EXPECT_EQ(entry.operations[0].location.file, "/src/f.py");
  EXPECT_EQ(entry.operations[0].location.line, 12);
  EXPECT_EQ(entry.operations[0].location.column, 3);
  // Name of the op, position of the innermost frame (the callee of the call site).
  EXPECT_EQ(entry.operations[2].location.text, "\"jit(f)/while\" at /src/f.py:7:10");
  EXPECT_EQ(entry.operations[2].location.name, "jit(f)/while");
  const Operation& add = entry.operations[2].regions[1].blocks[0].operations[1];
  EXPECT_EQ(add.location.text, "\"jit(f)/while/body/add\" at /src/g.py:1:2");
  EXPECT_EQ(entry.operations[3].location.text, "\"jit(f)/jit(helper)\" at /src/f.py:12:3");
  EXPECT_EQ(entry.operations[4].location.text, "");
  EXPECT_EQ(parsed->location.text, "");
  // Block arguments: the function's are named by JAX.
  ASSERT_EQ(entry.argument_locations.size(), 2u);
  EXPECT_EQ(entry.argument_locations[0].name, "x");
  EXPECT_EQ(entry.argument_locations[1].text, "");
  const Block& cond = entry.operations[2].regions[0].blocks[0];
  ASSERT_EQ(cond.argument_locations.size(), 2u);
  EXPECT_EQ(cond.argument_locations[1].text, "\"while:\"");
  const Function* helper = parsed->FindFunction("helper");
  EXPECT_EQ(helper->body.blocks[0].argument_locations.size(), 1u);
}

TEST(TextParserTest, DecodesConstants) {
  StatusOr<Module> parsed = TextParser::Parse(Program());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Block& entry = parsed->functions[0].body.blocks[0];
  const Attribute* one = entry.operations[0].Find("value");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->kind, Attribute::Kind::kDenseElements);
  EXPECT_EQ(one->type.ToString(), "tensor<f32>");
  EXPECT_FALSE(one->is_splat);
  float f;
  ASSERT_EQ(one->data.size(), 4u);
  std::memcpy(&f, one->data.data(), 4);
  EXPECT_EQ(f, 1.0f);
  const Attribute* matrix = entry.operations[1].Find("value");
  ASSERT_EQ(matrix->data.size(), 16u);
  int32_t values[4];
  std::memcpy(values, matrix->data.data(), 16);
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[1], -2);
  EXPECT_EQ(values[2], 3);
  EXPECT_EQ(values[3], 4);
}

// Parses `"test.op"() {v = <attribute>} : () -> ()` and returns attribute v.
Attribute ParseValue(const std::string& attribute) {
  std::string text = "\"test.op\"() {v = " + attribute + "} : () -> ()";
  StatusOr<Module> parsed = TextParser::Parse(text);
  EXPECT_TRUE(parsed.ok()) << attribute << ": " << parsed.status().ToString();
  if (!parsed.ok() || parsed->other_operations.size() != 1) return Attribute();
  return *parsed->other_operations[0].Find("v");
}

std::vector<uint8_t> Bytes(const std::string& data) { return {data.begin(), data.end()}; }

TEST(TextParserTest, DenseElementForms) {
  Attribute splat = ParseValue("dense<0x7FC00000> : tensor<2x3xf32>");
  EXPECT_TRUE(splat.is_splat);
  EXPECT_EQ(Bytes(splat.data), (std::vector<uint8_t>{0x00, 0x00, 0xC0, 0x7F}));
  EXPECT_EQ(splat.ExpandedData().size(), 24u);
  Attribute hex = ParseValue("dense<\"0x0100000002000000\"> : tensor<2xi32>");
  EXPECT_FALSE(hex.is_splat);
  EXPECT_EQ(Bytes(hex.data), (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0}));
  Attribute hex_splat = ParseValue("dense<\"0x0000803F\"> : tensor<4xf32>");
  EXPECT_TRUE(hex_splat.is_splat);
  Attribute bools = ParseValue("dense<[true, false, true]> : tensor<3xi1>");
  EXPECT_EQ(Bytes(bools.data), (std::vector<uint8_t>{1, 0, 1}));
  Attribute empty_splat = ParseValue("dense<0.000000e+00> : tensor<0x17xf32>");
  EXPECT_TRUE(empty_splat.is_splat);
  EXPECT_EQ(empty_splat.data.size(), 4u);
  EXPECT_EQ(empty_splat.ExpandedData().size(), 0u);
  Attribute bool_splat = ParseValue("dense<true> : tensor<5xi1>");
  EXPECT_TRUE(bool_splat.is_splat);
  EXPECT_EQ(Bytes(bool_splat.ExpandedData()), (std::vector<uint8_t>{1, 1, 1, 1, 1}));
  Attribute bf16 = ParseValue("dense<[1.000000e+00, -2.500000e+00, 0x7F80]> : tensor<3xbf16>");
  EXPECT_EQ(Bytes(bf16.data), (std::vector<uint8_t>{0x80, 0x3F, 0x20, 0xC0, 0x80, 0x7F}));
  Attribute f16 = ParseValue("dense<[1.000000e+00, 6.550400e+04]> : tensor<2xf16>");
  EXPECT_EQ(Bytes(f16.data), (std::vector<uint8_t>{0x00, 0x3C, 0xFF, 0x7B}));
  Attribute f8 = ParseValue("dense<[1.0, 4.480000e+02, -2.0]> : tensor<3xf8E4M3FN>");
  EXPECT_EQ(Bytes(f8.data), (std::vector<uint8_t>{0x38, 0x7E, 0xC0}));
  Attribute i4 = ParseValue("dense<[1, -2, 7]> : tensor<3xi4>");
  EXPECT_EQ(Bytes(i4.data), (std::vector<uint8_t>{0x01, 0x0E, 0x07}));
  Attribute u32 = ParseValue("dense<[0, 4294967295]> : tensor<2xui32>");
  EXPECT_EQ(Bytes(u32.data), (std::vector<uint8_t>{0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}));
  Attribute complex = ParseValue("dense<[(1.0,2.0), (3.0,-4.0)]> : tensor<2xcomplex<f32>>");
  ASSERT_EQ(complex.data.size(), 16u);
  float parts[4];
  std::memcpy(parts, complex.data.data(), 16);
  EXPECT_EQ(parts[0], 1.0f);
  EXPECT_EQ(parts[1], 2.0f);
  EXPECT_EQ(parts[3], -4.0f);
  Attribute complex_splat = ParseValue("dense<(1.0,2.0)> : tensor<3xcomplex<f64>>");
  EXPECT_TRUE(complex_splat.is_splat);
  EXPECT_EQ(complex_splat.data.size(), 16u);
  Attribute inf = ParseValue("dense<[0x7F800000, -1.5]> : tensor<2xf32>");
  EXPECT_EQ(Bytes(inf.data), (std::vector<uint8_t>{0, 0, 0x80, 0x7F, 0, 0, 0xC0, 0xBF}));
  Attribute empty = ParseValue("dense<> : tensor<2x0xf32>");
  EXPECT_TRUE(empty.data.empty());
  Attribute nested_empty = ParseValue("dense<[[], []]> : tensor<2x0xi32>");
  EXPECT_TRUE(nested_empty.data.empty());
  Attribute f64 = ParseValue("dense<[0.1]> : tensor<1xf64>");
  double d;
  std::memcpy(&d, f64.data.data(), 8);
  EXPECT_EQ(d, 0.1);
  Attribute vector = ParseValue("dense<1> : vector<2xi32>");
  EXPECT_EQ(vector.kind, Attribute::Kind::kDialect);
  EXPECT_EQ(vector.text, "dense<1> : vector<2xi32>");
}

TEST(TextParserTest, ScalarAndStructuredAttributes) {
  EXPECT_EQ(ParseValue("3 : i64").int_value, 3);
  EXPECT_EQ(ParseValue("-1 : i32").int_value, -1);
  EXPECT_EQ(ParseValue("4294967295 : ui32").int_value, 4294967295);
  Attribute untyped = ParseValue("7");
  EXPECT_EQ(untyped.kind, Attribute::Kind::kInteger);
  EXPECT_EQ(untyped.type.ToString(), "i64");
  Attribute real = ParseValue("1.500000e+00 : f32");
  EXPECT_EQ(real.kind, Attribute::Kind::kFloat);
  EXPECT_EQ(real.float_value, 1.5);
  EXPECT_TRUE(std::isnan(ParseValue("0x7FC00000 : f32").float_value));
  EXPECT_EQ(ParseValue("true").kind, Attribute::Kind::kBool);
  EXPECT_TRUE(ParseValue("true").bool_value);
  EXPECT_EQ(ParseValue("unit").kind, Attribute::Kind::kUnit);
  EXPECT_EQ(ParseValue("\"a\\22b\\n\\\\\"").string_value, "a\"b\n\\");
  Attribute symbol = ParseValue("@outer::@inner");
  EXPECT_EQ(symbol.string_value, "outer");
  ASSERT_EQ(symbol.elements.size(), 1u);
  EXPECT_EQ(symbol.elements[0].string_value, "inner");
  Attribute bools = ParseValue("array<i1: true, false>");
  EXPECT_EQ(bools.ints, (std::vector<int64_t>{1, 0}));
  Attribute floats = ParseValue("array<f32: 1.5, -2.0>");
  EXPECT_EQ(floats.floats, (std::vector<double>{1.5, -2.0}));
  Attribute type = ParseValue("tensor<?x3xf32>");
  EXPECT_EQ(type.kind, Attribute::Kind::kType);
  EXPECT_EQ(type.type.dims, (std::vector<int64_t>{kDynamicDim, 3}));
  Attribute dictionary = ParseValue("{a = [1 : i32, \"s\"], b, \"quoted name\" = {}}");
  ASSERT_EQ(dictionary.entries.size(), 3u);
  EXPECT_EQ(dictionary.Find("a")->elements.size(), 2u);
  EXPECT_EQ(dictionary.Find("b")->kind, Attribute::Kind::kUnit);
  EXPECT_EQ(dictionary.Find("quoted name")->kind, Attribute::Kind::kDictionary);
  Attribute conv = ParseValue("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>");
  EXPECT_EQ(conv.dialect, "stablehlo");
  EXPECT_EQ(conv.mnemonic, "conv");
  EXPECT_EQ(conv.text, "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>");
  Attribute sdy = ParseValue("#sdy.sharding<@mesh, [{\"i\"}, {}]>");
  EXPECT_EQ(sdy.dialect, "sdy");
  EXPECT_EQ(sdy.mnemonic, "sharding");
  Attribute resource = ParseValue("dense_resource<blob1> : tensor<2xf32>");
  EXPECT_EQ(resource.mnemonic, "dense_resource");
  EXPECT_EQ(resource.type.ToString(), "tensor<2xf32>");
}

TEST(TextParserTest, Types) {
  const char* types[] = {
      "tensor<2x3xbf16>", "tensor<i1>", "tensor<2xcomplex<f32>>", "tensor<?x3xf32>",
      "tensor<ui32>", "tensor<f8E4M3FN>", "tensor<i4>", "!stablehlo.token",
      "tuple<tensor<f32>, !stablehlo.token>", "tensor<0xf32>", "tensor<4xf32, #stablehlo.bounds<?>>",
      "tensor<*xf32>", "index", "(tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<i1>)",
  };
  for (const char* type : types) {
    Attribute parsed = ParseValue(type);
    EXPECT_EQ(parsed.kind, Attribute::Kind::kType) << type;
    EXPECT_EQ(parsed.type.ToString(), type);
  }
  EXPECT_EQ(ParseValue("tensor<2xcomplex<f32>>").type.element_type, ElementType::kC64);
  EXPECT_EQ(ParseValue("tensor<ui32>").type.element_type, ElementType::kU32);
  EXPECT_EQ(ParseValue("tensor<i1>").type.element_type, ElementType::kPred);
  EXPECT_EQ(ParseValue("tensor<0xf32>").type.dims, std::vector<int64_t>{0});
  EXPECT_EQ(ParseValue("!stablehlo.token").type.kind, Type::Kind::kToken);
  EXPECT_EQ(ParseValue("tensor<*xf32>").type.kind, Type::Kind::kOther);
  EXPECT_EQ(ParseValue("tensor<4xf32, #stablehlo.bounds<?>>").type.encoding,
            "#stablehlo.bounds<?>");
}

TEST(TextParserTest, TokensTuplesAndUnknownOps) {
  constexpr char kText[] = R"mlir(
#map = affine_map<(d0) -> (d0)>
!t = tensor<2xf32>
"sdy.mesh"() <{mesh = #sdy.mesh<["i"=4]>, sym_name = "mesh"}> : () -> () loc(unknown)
"func.func"() <{function_type = (!stablehlo.token, !t) -> !stablehlo.token, sym_name = "f"}> ({
^bb0(%t: !stablehlo.token, %x: tensor<2xf32>):
  %0 = "stablehlo.after_all"(%t) : (!stablehlo.token) -> !stablehlo.token
  %1 = "stablehlo.tuple"(%x, %0) : (tensor<2xf32>, !stablehlo.token) -> tuple<tensor<2xf32>, !stablehlo.token>
  %2 = "mystery.op"(%1) {m = #map} : (tuple<tensor<2xf32>, !stablehlo.token>) -> tensor<2xf32>
  "func.return"(%0) : (!stablehlo.token) -> ()
}) : () -> ()
{-#
  dialect_resources: { builtin: { blob1: "0x04000000" } }
#-}
)mlir";
  StatusOr<Module> parsed = TextParser::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->other_operations.size(), 1u);
  EXPECT_EQ(parsed->other_operations[0].name, "sdy.mesh");
  EXPECT_EQ(parsed->other_operations[0].Find("mesh")->text, "#sdy.mesh<[\"i\"=4]>");
  ASSERT_EQ(parsed->functions.size(), 1u);
  const Function& f = parsed->functions[0];
  EXPECT_TRUE(f.is_public);
  EXPECT_EQ(f.argument_types[1].ToString(), "tensor<2xf32>");
  const Operation& mystery = f.body.blocks[0].operations[2];
  EXPECT_EQ(mystery.name, "mystery.op");
  EXPECT_EQ(mystery.Find("m")->text, "affine_map<(d0) -> (d0)>");
  EXPECT_EQ(f.value_types[mystery.operands[0]].kind, Type::Kind::kTuple);
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
