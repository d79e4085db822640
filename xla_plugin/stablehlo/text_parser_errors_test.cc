// TextParser's errors: positions and what was expected; garbage, deep nesting and random bytes
// give errors, never crashes or hangs.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

// The error message of parsing `text` ("" when it parses).
std::string Error(const std::string& text) {
  StatusOr<Module> module = TextParser::Parse(text);
  return module.ok() ? "" : module.status().message();
}

constexpr char kFunction[] = R"mlir("func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
^bb0(%arg0: tensor<2xf32>):
  BODY
}) : () -> ()
)mlir";

std::string WithBody(const std::string& body) {
  std::string text = kFunction;
  return text.replace(text.find("BODY"), 4, body);
}

TEST(TextParserErrorsTest, PositionsAndExpectations) {
  EXPECT_EQ(Error(WithBody("\"func.return\"(%arg0) : (tensor<2xf32>) -> ()")), "");
  EXPECT_EQ(Error(WithBody("\"func.return\"(%nope) : (tensor<2xf32>) -> ()")),
            "MLIR text 3:17: use of undefined value %nope (values must be defined before use)");
  EXPECT_EQ(Error(WithBody("\"func.return\"(%arg0) : (tensor<3xf32>) -> ()")),
            "MLIR text 3:26: operand #0 of \"func.return\" is tensor<2xf32> but its type says "
            "tensor<3xf32>");
  EXPECT_EQ(Error(WithBody("func.return %arg0 : tensor<2xf32>")),
            "MLIR text 3:3: expected an operation name in quotes (TextParser reads MLIR's generic "
            "op form, which StablehloLibrary::ToGenericText prints), found 'func.return %arg0 : "
            "tens'");
  EXPECT_EQ(Error(WithBody("\"func.return\"(%arg0 : (tensor<2xf32>) -> ()")),
            "MLIR text 3:23: expected ',' or ')' after the operands of \"func.return\", found ': "
            "(tensor<2xf32>) -> ()'");
  EXPECT_EQ(Error(WithBody("%0:2 = \"t.op\"() : () -> tensor<f32>")),
            "MLIR text 3:3: \"t.op\" defines 2 results but its type has 1");
  EXPECT_EQ(Error(WithBody("%0:2 = \"t.op\"() : () -> (tensor<f32>, tensor<f32>)\n  "
                           "\"t.use\"(%0) : (tensor<f32>) -> ()")),
            "MLIR text 4:11: %0 has 2 results: name one as %0#i");
  EXPECT_EQ(Error(WithBody("%0 = \"t.op\"() : () -> tensor<f32>\n  %0 = \"t.op\"() : () -> "
                           "tensor<f32>")),
            "MLIR text 4:3: redefinition of %0");
  EXPECT_EQ(Error(WithBody("\"t.op\"() {v = dense<[1, 2]> : tensor<3xi32>} : () -> ()")),
            "MLIR text 3:23: the literal's shape 2x does not match (dense literal of "
            "tensor<3xi32>)");
  EXPECT_EQ(Error(WithBody("\"t.op\"() {v = dense<300> : tensor<i8>} : () -> ()")),
            "MLIR text 3:23: integer 300 does not fit 8 bits (dense literal of tensor<i8>)");
  EXPECT_EQ(Error(WithBody("\"t.op\"() {v = #undefined} : () -> ()")),
            "MLIR text 3:17: undefined attribute alias #undefined");
  EXPECT_EQ(Error(WithBody("\"t.op\"() {v = tensor<2xfoo>} : () -> ()")),
            "MLIR text 3:26: expected a type, found 'foo'");
  EXPECT_EQ(Error(WithBody("\"t.op\"() {v = \"unterminated} : () -> ()")),
            "MLIR text 3:17: string literal without its closing '\"'");
  EXPECT_EQ(Error(WithBody("\"cf.br\"()[^bb1] : () -> ()")),
            "MLIR text 3:12: expected no successor list: unstructured control flow is not "
            "supported, found '[^bb1] : () -> ()'");
  // A region's values are out of scope after it.
  EXPECT_EQ(Error(WithBody("\"t.region\"() ({\n  %in = \"t.op\"() : () -> tensor<f32>\n  }) : () "
                           "-> ()\n  \"t.use\"(%in) : (tensor<f32>) -> ()")),
            "MLIR text 6:11: use of undefined value %in (values must be defined before use)");
  EXPECT_EQ(Error("\"func.func\"() <{function_type = (tensor<f32>) -> (), sym_name = \"f\"}> ({\n"
                  "^bb0(%a: tensor<i32>):\n  \"func.return\"() : () -> ()\n}) : () -> ()"),
            "func.func @f: argument #0 is tensor<i32> but function_type says tensor<f32>");
  EXPECT_EQ(Error("\"func.func\"() <{sym_name = \"f\"}> ({\n}) : () -> ()"),
            "func.func @f has no function_type");
  EXPECT_EQ(Error("\"builtin.module\"() ({\n}) : () -> ()\n\"t.op\"() : () -> ()"),
            "MLIR text: a \"builtin.module\" must be the only top-level op");
  EXPECT_EQ(Error("#loc = loc(\"f\":1:2 to)\n"), "MLIR text 1:22: expected an end line, found ')'");
}

// MLIR's %N / %argN names are kept by number, others hashed: names far apart, below the first
// one, reused after their region, redefined.
TEST(TextParserErrorsTest, NumberedNames) {
  const std::string define = "\"t.op\"() : () -> tensor<f32>\n  ";
  std::string body = "%10 = " + define + "%200 = " + define + "%3 = " + define + "%x.y = " + define;
  for (int i = 11; i < 80; ++i) body += "%" + std::to_string(i) + " = " + define;
  body += "\"t.use\"(%200, %3, %10, %79, %x.y, %arg0) : (tensor<f32>, tensor<f32>, tensor<f32>, "
          "tensor<f32>, tensor<f32>, tensor<2xf32>) -> ()\n  ";
  body += "\"t.region\"() ({\n  %500 = " + define + "%arg1 = " + define + "}) : () -> ()\n  ";
  body += "%500 = " + define + "%arg1 = " + define;  // Out of scope after the region: free again.
  EXPECT_EQ(Error(WithBody(body + "\"func.return\"(%arg0) : (tensor<2xf32>) -> ()")), "");
  std::string twice = Error(WithBody(body + "%200 = " + define));
  EXPECT_NE(twice.find("redefinition of %200"), std::string::npos) << twice;
  std::string arg = Error(WithBody(body + "%arg0 = " + define));
  EXPECT_NE(arg.find("redefinition of %arg0"), std::string::npos) << arg;
  std::string zero = Error(WithBody("%00 = " + define + "\"t.use\"(%0) : (tensor<f32>) -> ()"));
  EXPECT_NE(zero.find("use of undefined value %0 "), std::string::npos) << zero;
}

TEST(TextParserErrorsTest, DeepNestingIsAnError) {
  std::string deep_array(5000, '[');
  EXPECT_NE(Error("\"t.op\"() {v = " + deep_array + "} : () -> ()").find("less nesting"),
            std::string::npos);
  std::string deep_regions;
  for (int i = 0; i < 300; ++i) deep_regions += "\"t.r\"() ({\n";
  EXPECT_NE(Error(deep_regions).find("regions nested at most 100 deep"), std::string::npos);
  std::string deep_type;
  for (int i = 0; i < 3000; ++i) deep_type += "tuple<";
  EXPECT_NE(Error("\"t.op\"() {v = " + deep_type + "} : () -> ()").find("less nesting"),
            std::string::npos);
  std::string deep_loc = "#loc = loc(";
  for (int i = 0; i < 3000; ++i) deep_loc += "\"n\"(";
  EXPECT_NE(Error(deep_loc).find("a location nested less deeply"), std::string::npos);
  std::string deep_dense = "\"t.op\"() {v = dense<" + std::string(3000, '[') + "> : tensor<f32>}";
  EXPECT_NE(Error(deep_dense).find("a dense literal nested less deeply"), std::string::npos);
  // Long alias chains and cycles resolve to something, without recursing forever.
  std::string chain = "\"t.op\"() : () -> () loc(#l0)\n#l0 = loc(#l1)\n#l1 = loc(#l0)\n";
  for (int i = 2; i < 2000; ++i) {
    chain += "#m" + std::to_string(i) + " = loc(#m" + std::to_string(i - 1) + ")\n";
  }
  EXPECT_EQ(Error(chain), "");
  // Aliases cannot expand a short text without bound.
  std::string wide = "!t = tensor<" ;
  for (int i = 0; i < 4000; ++i) wide += "1x";
  wide += "f32>\n\"t.op\"() {";
  for (int i = 0; i < 20000; ++i) wide += "a" + std::to_string(i) + " = !t, ";
  wide += "z = !t} : () -> ()";
  EXPECT_NE(Error(wide).find("aliases expand to more than 64 times the text"), std::string::npos);
  // Cycles through fused locations branch at every level: resolved once each, not 2^depth times.
  EXPECT_EQ(Error("\"t.op\"() : () -> () loc(#a)\n#a = loc(fused[#b, #b, \"x\"])\n"
                  "#b = loc(fused[#a, #a, #a])\n"),
            "");
}

TEST(TextParserErrorsTest, GarbageNeverCrashes) {
  std::mt19937 random(7);
  const std::string alphabet = "\"%#!^@<>{}()[]:,=-x0123456789abfi. \n\\";
  const std::string valid = WithBody(
      "%0 = \"stablehlo.add\"(%arg0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> "
      "loc(#loc1)\n  \"func.return\"(%0) : (tensor<2xf32>) -> ()") + "#loc1 = loc(\"f\":1:2)\n";
  ASSERT_EQ(Error(valid), "");
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    if (i % 2 == 0) {
      for (int k = 0; k < 60; ++k) text.push_back(alphabet[random() % alphabet.size()]);
    } else {  // A valid program, cut and with bytes replaced.
      text = valid.substr(0, random() % valid.size());
      for (int k = 0; k < 3 && !text.empty(); ++k) {
        text[random() % text.size()] = static_cast<char>(random());
      }
    }
    (void)TextParser::Parse(text);
  }
  EXPECT_NE(Error(std::string("\0\xff\xfe", 3)), "");
  EXPECT_EQ(Error(""), "");  // Nothing: an empty module.
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
