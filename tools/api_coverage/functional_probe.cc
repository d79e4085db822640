#include "tools/api_coverage/functional_probe.h"

// C standard library / POSIX.
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

// C++ standard library.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

// The child's side: the recorder and the scenario it runs.
#include "tools/api_coverage/probe_recorder.h"
#include "tools/api_coverage/probe_scenario.h"

namespace api_coverage {

bool ParseCreateOption(const std::string& text, CreateOption* option) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) return false;
  const size_t colon = text.find(':', equals);
  if (colon == std::string::npos) return false;
  option->name = text.substr(0, equals);
  const std::string type = text.substr(equals + 1, colon - equals - 1);
  const std::string value = text.substr(colon + 1);
  if (type == "int") {
    char* end = nullptr;
    option->is_int = true;
    option->int_value = std::strtoll(value.c_str(), &end, 10);
    return !value.empty() && end != nullptr && *end == '\0';
  }
  if (type == "bool") {
    option->is_bool = true;
    option->int_value = value == "true" ? 1 : 0;
    return value == "true" || value == "false";
  }
  if (type == "str") {
    option->string_value = value;
    return true;
  }
  if (type == "path") {
    char resolved[PATH_MAX];
    option->string_value = realpath(value.c_str(), resolved) != nullptr ? resolved : value;
    return true;
  }
  return false;
}

std::map<std::string, FunctionalResult> RunFunctionalProbe(
    const PJRT_Api* api, const std::vector<CreateOption>& options) {
  std::map<std::string, FunctionalResult> results;
  int fds[2];
  if (pipe(fds) != 0) return results;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return results;
  }
  if (pid == 0) {
    close(fds[0]);
    ProbeRecorder probe(api, fds[1]);
    RunScenario(&probe, options);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t got; (got = read(fds[0], chunk, sizeof(chunk))) > 0;) text.append(chunk, got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::istringstream lines(text);
  std::string line, running;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    if (fields.size() >= 2 && fields[0] == "RUN") running = fields[1];
    if (fields.size() >= 3 && fields[0] == "DONE") {
      if (fields[1] == running) running.clear();
      if (results.count(fields[1]) == 0) {
        results[fields[1]] = FunctionalResult{fields[2], fields.size() > 3 ? fields[3] : ""};
      }
    }
  }
  if (!running.empty()) results[running] = FunctionalResult{"crashed", ""};
  return results;
}

}  // namespace api_coverage
