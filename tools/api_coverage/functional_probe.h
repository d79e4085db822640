// The functional probe of api_coverage: calls PJRT_Api slots with valid arguments on a real client
// (create, query, transfer, compile, execute, serialize, destroy) and records what each answered,
// so a slot that only validates its Args and then answers UNIMPLEMENTED (or fails) for real use is
// not counted as working.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_FUNCTIONAL_PROBE_H_
#define PJRTKIT_TOOLS_API_COVERAGE_FUNCTIONAL_PROBE_H_

#include <map>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace api_coverage {

// What one functional call answered.
struct FunctionalResult {
  std::string status;   // "ok", "UNIMPLEMENTED", "error: CODE", or "crashed".
  std::string message;  // The error's message (empty for "ok").
};

// A create option given on the command line.
struct CreateOption {
  std::string name;
  bool is_int = false;
  bool is_bool = false;
  int64_t int_value = 0;  // The int, or the bool as 0 / 1.
  std::string string_value;
};

// Parses "NAME=int:4", "NAME=bool:true", "NAME=str:text" or "NAME=path:relative/or/absolute"
// (made absolute).
// Returns false on a malformed option.
bool ParseCreateOption(const std::string& text, CreateOption* option);

// Runs the scenario in a forked child (a crash cannot take the report down) and returns, per
// slot name, what it answered; slots it never reached are absent. Extra rows for behaviour within
// a slot are keyed "SLOT (what)". A crash marks the slot being called "crashed".
std::map<std::string, FunctionalResult> RunFunctionalProbe(
    const PJRT_Api* api, const std::vector<CreateOption>& options);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_FUNCTIONAL_PROBE_H_
