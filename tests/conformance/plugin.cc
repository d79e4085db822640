#include "tests/conformance/plugin.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace pjrt_conformance {
namespace {

// Process-wide state: the registered plugin and the shared client.
struct State {
  Plugin plugin;                 // Set by RegisterPlugin.
  bool registered = false;       // RegisterPlugin was called.
  bool initialized = false;      // PJRT_Plugin_Initialize was called.
  Status init_status;            // Its result.
  bool client_attempted = false;  // Shared client creation was tried.
  Status client_status;          // Its result.
  ClientPtr client;              // The shared client.
};

State& GetState() {
  static State* state = new State();  // Never destroyed: outlives every test.
  return *state;
}

// Destroys the shared client after the last test, before the plugin is unloaded.
class SharedClientEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { GetState().client.reset(); }
};

}  // namespace

NamedOption NamedOption::Int(std::string name, int64_t value) {
  NamedOption option;
  option.name = std::move(name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = value;
  return option;
}

NamedOption NamedOption::Str(std::string name, std::string value) {
  NamedOption option;
  option.name = std::move(name);
  option.type = PJRT_NamedValue_kString;
  option.string_value = std::move(value);
  return option;
}

NamedOption NamedOption::Bool(std::string name, bool value) {
  NamedOption option;
  option.name = std::move(name);
  option.type = PJRT_NamedValue_kBool;
  option.bool_value = value;
  return option;
}

NamedOption NamedOption::Float(std::string name, float value) {
  NamedOption option;
  option.name = std::move(name);
  option.type = PJRT_NamedValue_kFloat;
  option.float_value = value;
  return option;
}

NamedOption NamedOption::IntList(std::string name, std::vector<int64_t> value) {
  NamedOption option;
  option.name = std::move(name);
  option.type = PJRT_NamedValue_kInt64List;
  option.int64_list = std::move(value);
  return option;
}

void RegisterPlugin(const PJRT_Api* api, std::vector<NamedOption> create_options,
                    PluginTraits traits) {
  State& state = GetState();
  if (!state.registered) {
    ::testing::AddGlobalTestEnvironment(new SharedClientEnvironment());
  }
  state.plugin.api = api;
  state.plugin.options = std::move(create_options);
  state.plugin.traits = std::move(traits);
  state.registered = true;
}

const Plugin* RegisteredPlugin() {
  const State& state = GetState();
  return state.registered && state.plugin.api != nullptr ? &state.plugin : nullptr;
}

Status EnsureInitialized() {
  State& state = GetState();
  if (!state.initialized) {
    state.initialized = true;
    const PJRT_Api* api = state.plugin.api;
    PJRT_ARGS(PJRT_Plugin_Initialize_Args, args);
    state.init_status = TakeError(api, api->PJRT_Plugin_Initialize(&args));
  }
  return state.init_status;
}

std::vector<PJRT_NamedValue> ToNamedValues(const std::vector<NamedOption>& options) {
  std::vector<PJRT_NamedValue> values;
  for (const NamedOption& option : options) {
    PJRT_ARGS(PJRT_NamedValue, value);
    value.name = option.name.c_str();
    value.name_size = option.name.size();
    value.type = option.type;
    switch (option.type) {
      case PJRT_NamedValue_kString:
        value.string_value = option.string_value.c_str();
        value.value_size = option.string_value.size();
        break;
      case PJRT_NamedValue_kInt64:
        value.int64_value = option.int64_value;
        value.value_size = 1;
        break;
      case PJRT_NamedValue_kInt64List:
        value.int64_array_value = option.int64_list.data();
        value.value_size = option.int64_list.size();
        break;
      case PJRT_NamedValue_kFloat:
        value.float_value = option.float_value;
        value.value_size = 1;
        break;
      case PJRT_NamedValue_kBool:
        value.bool_value = option.bool_value;
        value.value_size = 1;
        break;
    }
    values.push_back(value);
  }
  return values;
}

Status CreateClient(const std::vector<NamedOption>& options, ClientPtr* client) {
  const PJRT_Api* api = GetState().plugin.api;
  const std::vector<PJRT_NamedValue> values = ToNamedValues(options);
  PJRT_ARGS(PJRT_Client_Create_Args, args);
  args.create_options = values.data();
  args.num_options = values.size();
  Status status = TakeError(api, api->PJRT_Client_Create(&args));
  if (status.ok() && args.client == nullptr) {
    status.code = PJRT_Error_Code_INTERNAL;
    status.message = "PJRT_Client_Create returned OK and a NULL client";
  }
  if (status.ok()) *client = ClientPtr(api, args.client);
  return status;
}

Status SharedClient(PJRT_Client** client) {
  State& state = GetState();
  if (!state.client_attempted) {
    state.client_attempted = true;
    state.client_status = CreateClient(state.plugin.options, &state.client);
  }
  *client = state.client.get();
  return state.client_status;
}

bool ParseNamedOption(const std::string& spec, NamedOption* out, std::string* error) {
  const size_t eq = spec.find('=');
  const size_t colon = eq == std::string::npos ? eq : spec.find(':', eq);
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos) {
    *error = "expected name=type:value, got '" + spec + "'";
    return false;
  }
  const std::string name = spec.substr(0, eq);
  const std::string type = spec.substr(eq + 1, colon - eq - 1);
  const std::string value = spec.substr(colon + 1);
  char* end = nullptr;
  if (type == "str") {
    *out = NamedOption::Str(name, value);
  } else if (type == "path") {
    // A file path made absolute (Bazel hands tests runfiles-relative paths).
    char* resolved = realpath(value.c_str(), nullptr);
    if (resolved == nullptr) {
      *error = "path does not exist: '" + value + "'";
      return false;
    }
    *out = NamedOption::Str(name, resolved);
    free(resolved);
  } else if (type == "int") {
    const long long parsed = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') {
      *error = "not an integer: '" + value + "'";
      return false;
    }
    *out = NamedOption::Int(name, parsed);
  } else if (type == "bool") {
    if (value != "true" && value != "false") {
      *error = "bool must be true or false, got '" + value + "'";
      return false;
    }
    *out = NamedOption::Bool(name, value == "true");
  } else if (type == "float") {
    const float parsed = std::strtof(value.c_str(), &end);
    if (value.empty() || *end != '\0') {
      *error = "not a float: '" + value + "'";
      return false;
    }
    *out = NamedOption::Float(name, parsed);
  } else if (type == "ints") {
    std::vector<int64_t> list;
    size_t start = 0;
    while (start <= value.size() && !value.empty()) {
      const size_t comma = value.find(',', start);
      const std::string item =
          value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const long long parsed = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0') {
        *error = "not an integer list: '" + value + "'";
        return false;
      }
      list.push_back(parsed);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    *out = NamedOption::IntList(name, std::move(list));
  } else {
    *error = "unknown option type '" + type + "' (int, str, path, bool, float, ints)";
    return false;
  }
  return true;
}

}  // namespace pjrt_conformance
