// print_program: prints a program file as StablehloLibrary::ToGenericText reads it (MLIR generic
// op form with locations), or with --ops the parsed Module's operations, one per line.
//   bazel run //xla_plugin/stablehlo:print_program -- <libTorchMLIRAggregateCAPI.so> <file> [--ops]
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "xla_plugin/stablehlo/stablehlo_library.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace {

void PrintBlock(const pjrtkit::stablehlo::Function& function,
                const pjrtkit::stablehlo::Block& block, int indent) {
  for (const pjrtkit::stablehlo::Operation& op : block.operations) {
    std::cout << std::string(indent, ' ') << op.name << " (";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      std::cout << (i ? ", " : "") << function.value_types[op.operands[i]].ToString();
    }
    std::cout << ") -> (";
    for (size_t i = 0; i < op.results.size(); ++i) {
      std::cout << (i ? ", " : "") << function.value_types[op.results[i]].ToString();
    }
    std::cout << ")  " << op.location.text << "\n";
    for (const auto& region : op.regions) {
      for (const auto& inner : region.blocks) PrintBlock(function, inner, indent + 2);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: print_program <libTorchMLIRAggregateCAPI.so> <program file> [--ops]\n";
    return 2;
  }
  auto library = pjrtkit::stablehlo::StablehloLibrary::Load(argv[1]);
  if (!library.ok()) {
    std::cerr << library.status().ToString() << "\n";
    return 1;
  }
  std::ifstream file(argv[2], std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  auto text = (*library)->ToGenericText(bytes.str());
  if (!text.ok()) {
    std::cerr << text.status().ToString() << "\n";
    return 1;
  }
  if (argc < 4 || std::string(argv[3]) != "--ops") {
    std::cout << *text;
    return 0;
  }
  auto module = pjrtkit::stablehlo::TextParser::Parse(*text);
  if (!module.ok()) {
    std::cerr << module.status().ToString() << "\n";
    return 1;
  }
  for (const auto& function : module->functions) {
    std::cout << "func @" << function.name << "\n";
    for (const auto& block : function.body.blocks) PrintBlock(function, block, 2);
  }
  return 0;
}
