// api_coverage: prints, as a markdown table, which PJRT_Api slots a PJRT plugin implements.
//
//   api_coverage path/to/plugin.so
//
// It dlopens the plugin, calls GetPjrtApi(), and classifies every slot of pjrt_c_api.h (the list
// is tools/api_coverage/pjrt_api_slots.inc, generated from the header):
//   NULL           the slot is a null pointer;
//   absent         the slot lies beyond the plugin's PJRT_Api struct_size (an older plugin);
//   UNIMPLEMENTED  called with a zero-filled Args struct whose struct_size is 0, it returned an
//                  UNIMPLEMENTED error;
//   implemented    it returned any other error (an implemented entry rejects struct_size 0), or
//                  (noted) accepted the zeroed args or crashed on them. PJRT_Error_* slots are
//                  reported implemented when non-NULL without being called.
// Each probe runs in a forked child, so a plugin that crashes on zeroed args cannot take the
// report down. That probe shows only that a slot validates its Args: a second, functional probe
// (functional_probe.h) creates a client with the --option=NAME=TYPE:VALUE options and calls the
// slots it can with valid arguments, and the table reports both columns. The extension chain
// (PJRT_Api.extension_start) is listed after the table, beside the chain of the plugin it wraps
// when --inner=path/to/inner_plugin.so names one.

// C standard library / POSIX.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

// C++ standard library.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include <type_traits>

// PJRT C API.
#include "tools/api_coverage/extension_table.h"
#include "tools/api_coverage/functional_probe.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// How a slot was classified.
enum class Verdict : char {
  kImplemented = 'I',       // Rejected struct_size 0 with a non-UNIMPLEMENTED error.
  kAcceptedZeroArgs = 'A',  // Returned no error for zeroed args.
  kUnimplemented = 'U',     // Returned UNIMPLEMENTED.
  kCrashed = 'C',           // The probe died.
  kNull = 'N',              // Null pointer.
  kAbsent = 'X',            // Beyond the plugin's struct_size.
  kNotProbed = 'E',         // PJRT_Error_*: non-NULL, not called.
};

// The text of a verdict for the table.
const char* VerdictText(Verdict v) {
  switch (v) {
    case Verdict::kImplemented:
      return "implemented";
    case Verdict::kAcceptedZeroArgs:
      return "implemented (accepted zeroed args)";
    case Verdict::kUnimplemented:
      return "UNIMPLEMENTED";
    case Verdict::kCrashed:
      return "implemented (crashed on zeroed args)";
    case Verdict::kNull:
      return "NULL";
    case Verdict::kAbsent:
      return "absent (older plugin)";
    case Verdict::kNotProbed:
      return "implemented";
  }
  return "?";
}

// Calls `fn` with a zero-filled Args struct (struct_size 0) and classifies the result. Runs in
// the probe child.
template <typename Args, typename Result>
Verdict CallWithZeroArgs(const PJRT_Api* api, Result (*fn)(Args*)) {
  if constexpr (std::is_void_v<Result>) {
    return Verdict::kNotProbed;  // Only PJRT_Error_Destroy / _Message return void.
  } else {
    alignas(16) unsigned char zeroed[4096];
    std::memset(zeroed, 0, sizeof(zeroed));
    PJRT_Error* error = fn(reinterpret_cast<Args*>(zeroed));
    if (error == nullptr) return Verdict::kAcceptedZeroArgs;
    if (api->PJRT_Error_GetCode == nullptr) return Verdict::kImplemented;
    PJRT_Error_GetCode_Args code;
    std::memset(&code, 0, sizeof(code));
    code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
    code.error = error;
    if (api->PJRT_Error_GetCode(&code) != nullptr) return Verdict::kImplemented;
    return code.code == PJRT_Error_Code_UNIMPLEMENTED ? Verdict::kUnimplemented
                                                      : Verdict::kImplemented;
  }
}

// Probes `fn` in a forked child so that a crash is reported, not suffered.
template <typename Args, typename Result>
Verdict Probe(const PJRT_Api* api, Result (*fn)(Args*)) {
  int fds[2];
  if (pipe(fds) != 0) return CallWithZeroArgs(api, fn);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return CallWithZeroArgs(api, fn);
  }
  if (pid == 0) {  // Child: a crashing plugin's own diagnostics would only clutter the report.
    close(fds[0]);
    const int dev_null = open("/dev/null", O_WRONLY);
    if (dev_null >= 0) dup2(dev_null, STDERR_FILENO);
    const char verdict = static_cast<char>(CallWithZeroArgs(api, fn));
    ssize_t ignored = write(fds[1], &verdict, 1);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  char verdict = 0;
  const ssize_t got = read(fds[0], &verdict, 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != 1) return Verdict::kCrashed;
  return static_cast<Verdict>(verdict);
}

// Counts of each verdict.
struct Summary {
  int implemented = 0;
  int unimplemented = 0;
  int null = 0;
  int absent = 0;
  int functional_ok = 0;             // Functional probe: answered OK.
  int functional_unimplemented = 0;  // Functional probe: answered UNIMPLEMENTED.
  int functional_error = 0;          // Functional probe: another error, or crashed.
  int not_exercised = 0;             // Not called by the functional probe.
};

using Functional = std::map<std::string, api_coverage::FunctionalResult>;

// Classifies one slot at `offset` in the PJRT_Api.
template <typename Args, typename Result>
Verdict Classify(const PJRT_Api* api, const char* name, size_t offset, Result (*fn)(Args*)) {
  if (offset + sizeof(fn) > api->struct_size) return Verdict::kAbsent;
  if (fn == nullptr) return Verdict::kNull;
  if (std::strncmp(name, "PJRT_Error_", 11) == 0) return Verdict::kNotProbed;
  return Probe(api, fn);
}

// Prints the table (the zeroed-args probe and the functional probe) and returns the counts.
Summary PrintSlots(const PJRT_Api* api, const Functional& functional) {
  Summary summary;
  std::printf("| # | slot | status | functional |\n| --- | --- | --- | --- |\n");
  int index = 0;
  auto report = [&](const char* name, Verdict v) {
    auto found = functional.find(name);
    const std::string used = found == functional.end() ? "not exercised" : found->second.status;
    if (found == functional.end()) {
      ++summary.not_exercised;
    } else if (used == "ok") {
      ++summary.functional_ok;
    } else if (used == "UNIMPLEMENTED") {
      ++summary.functional_unimplemented;
    } else {
      ++summary.functional_error;
    }
    std::printf("| %d | %s | %s | %s |\n", ++index, name, VerdictText(v), used.c_str());
    switch (v) {
      case Verdict::kUnimplemented:
        ++summary.unimplemented;
        break;
      case Verdict::kNull:
        ++summary.null;
        break;
      case Verdict::kAbsent:
        ++summary.absent;
        break;
      default:
        ++summary.implemented;
        break;
    }
  };
#define PJRT_API_SLOT(name) \
  report(#name, Classify(api, #name, offsetof(PJRT_Api, name), api->name));
#include "tools/api_coverage/pjrt_api_slots.inc"
  return summary;
}

// Prints the rows about behaviour within a slot ("SLOT (what)") and the message of every
// functional answer that was not OK.
void PrintFunctionalDetails(const Functional& functional) {
  std::printf("\n## Functional probe: within slots, and answers other than OK\n\n");
  std::printf("| call | functional | message |\n| --- | --- | --- |\n");
  for (const auto& [name, result] : functional) {
    if (name.find(" (") == std::string::npos && result.status == "ok") continue;
    std::printf("| %s | %s | %s |\n", name.c_str(), result.status.c_str(),
                result.message.c_str());
  }
}

// Loads the plugin at `path` and returns its table, or nullptr (with a message on stderr).
const PJRT_Api* LoadPlugin(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "api_coverage: cannot load %s: %s\n", path, dlerror());
    return nullptr;
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(library, "GetPjrtApi"));
  if (get_api == nullptr) {
    std::fprintf(stderr, "api_coverage: %s does not export GetPjrtApi\n", path);
    return nullptr;
  }
  const PJRT_Api* api = get_api();
  if (api == nullptr) std::fprintf(stderr, "api_coverage: %s: GetPjrtApi() returned NULL\n", path);
  return api;
}

// The file name of `path`.
std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Prints the extension chain of `api`, beside that of `inner` (the plugin it wraps) if given.
void PrintExtensions(const PJRT_Api* api, const std::string& path, const PJRT_Api* inner,
                     const std::string& inner_path) {
  std::printf("\n## Extensions\n\n");
  const std::vector<api_coverage::ExtensionEntry> chain = api_coverage::ReadExtensionChain(api);
  if (inner == nullptr) {
    if (chain.empty()) {
      std::printf("none (PJRT_Api.extension_start is NULL)\n");
      return;
    }
    std::printf("%s", api_coverage::ExtensionTable({BaseName(path)}, {chain}).c_str());
    return;
  }
  std::printf("%s and the plugin it wraps, %s (PJRT C API %d.%d): struct_size (and version, "
              "where the extension has one) of each extension.\n\n",
              BaseName(path).c_str(), BaseName(inner_path).c_str(),
              inner->pjrt_api_version.major_version, inner->pjrt_api_version.minor_version);
  std::printf("%s", api_coverage::ExtensionTable(
                        {BaseName(path), "inner: " + BaseName(inner_path)},
                        {chain, api_coverage::ReadExtensionChain(inner)})
                        .c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<api_coverage::CreateOption> options;
  const char* plugin = nullptr;
  std::string inner_path;
  bool usage_error = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--option=", 0) == 0) {
      api_coverage::CreateOption option;
      if (!api_coverage::ParseCreateOption(arg.substr(9), &option)) {
        std::fprintf(stderr, "api_coverage: bad option %s (want NAME=int:N, NAME=bool:B, "
                     "NAME=str:S or NAME=path:P)\n", argv[i]);
        return 2;
      }
      options.push_back(option);
    } else if (arg.rfind("--inner=", 0) == 0 && arg.size() > 8) {
      inner_path = arg.substr(8);
    } else if (plugin == nullptr && arg.rfind("--", 0) != 0) {
      plugin = argv[i];
    } else {
      usage_error = true;
    }
  }
  if (plugin == nullptr || usage_error) {
    std::fprintf(stderr,
                 "usage: %s path/to/pjrt_plugin.so [--option=NAME=TYPE:VALUE]... "
                 "[--inner=path/to/inner_plugin.so]\n",
                 argv[0]);
    return 2;
  }
  const PJRT_Api* api = LoadPlugin(plugin);
  if (api == nullptr) return 1;
  std::printf("# PJRT API coverage of %s\n\n", plugin);
  std::printf(
      "Plugin PJRT C API %d.%d, PJRT_Api struct_size %zu; this report knows %d.%d "
      "(struct_size %zu).\n\n",
      api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version, api->struct_size,
      PJRT_API_MAJOR, PJRT_API_MINOR, static_cast<size_t>(PJRT_Api_STRUCT_SIZE));
  const Functional functional = api_coverage::RunFunctionalProbe(api, options);
  Summary summary = PrintSlots(api, functional);
  std::printf("\nSummary: %d implemented, %d UNIMPLEMENTED, %d NULL, %d absent.\n",
              summary.implemented, summary.unimplemented, summary.null, summary.absent);
  std::printf(
      "Functional (valid arguments on a client): %d ok, %d UNIMPLEMENTED, %d failed, %d not "
      "exercised.\n",
      summary.functional_ok, summary.functional_unimplemented, summary.functional_error,
      summary.not_exercised);
  PrintFunctionalDetails(functional);
  // The inner plugin is loaded only now, after the probes' children have run.
  const PJRT_Api* inner = inner_path.empty() ? nullptr : LoadPlugin(inner_path.c_str());
  if (!inner_path.empty() && inner == nullptr) return 1;
  PrintExtensions(api, plugin, inner, inner_path);
  return 0;
}
