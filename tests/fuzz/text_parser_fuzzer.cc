// libFuzzer target: the sim device's program reader, pjrtkit's parser of MLIR generic text
// (xla_plugin/stablehlo/text_parser.h: TextParser::Parse and ParseType), on its own: no library,
// no plugin. Every program a device with its own compiler runs goes through it (the StableHLO
// library turns JAX's bytecode into this text; ProgramReader then reads the module).
//
// Input: a mode byte, then text. Even mode: TextParser::Parse(text); odd mode:
// TextParser::ParseType(text).
// Oracle: a refusal is INVALID_ARGUMENT with a non-empty message; the same text parsed again gives
// the same answer (the same message, or a module of as many functions and other operations). A crash, a sanitizer
// report, a leak, unbounded recursion (the parser caps nesting at kMaxDepth) or an allocation over
// libFuzzer's -malloc_limit_mb fails the run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "xla_plugin/stablehlo/text_parser.h"

namespace {

// Fails the run with `what` (libFuzzer saves the input).
void Require(bool condition, const std::string& what) {
  if (condition) return;
  std::fprintf(stderr, "text_parser_fuzzer oracle failed: %s\n", what.c_str());
  std::abort();
}

// Checks a refusal; returns its message ("" for OK).
std::string CheckStatus(const pjrtkit::Status& status) {
  if (status.ok()) return "";
  Require(status.code() == pjrtkit::StatusCode::kInvalidArgument,
          "refused with " + status.ToString());
  Require(!status.message().empty(), "refused with an empty message");
  return status.message();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    const auto first = pjrtkit::stablehlo::TextParser::ParseType(text);
    const auto second = pjrtkit::stablehlo::TextParser::ParseType(text);
    Require(CheckStatus(first.status()) == CheckStatus(second.status()),
            "ParseType answered twice differently");
    return 0;
  }
  const auto first = pjrtkit::stablehlo::TextParser::Parse(text);
  const auto second = pjrtkit::stablehlo::TextParser::Parse(text);
  Require(CheckStatus(first.status()) == CheckStatus(second.status()),
          "Parse answered twice differently");
  if (first.ok()) {
    Require(first->functions.size() == second->functions.size() &&
                first->other_operations.size() == second->other_operations.size(),
            "Parse gave modules of different sizes");
  }
  return 0;
}
