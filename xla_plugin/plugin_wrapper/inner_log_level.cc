#include "xla_plugin/plugin_wrapper/inner_log_level.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// True for "0".."3".
bool IsLevel(const char* value) {
  return value != nullptr && value[0] >= '0' && value[0] <= '3' && value[1] == '\0';
}

// The value of `name` in the environment the process was started with (Linux:
// /proc/self/environ, which later setenv calls do not change); nullopt when absent or unreadable.
std::optional<std::string> InitialValue(const std::string& name) {
  std::ifstream file("/proc/self/environ", std::ios::binary);
  if (!file) return std::nullopt;
  const std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string prefix = name + "=";
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    if (all.compare(start, prefix.size(), prefix) == 0) {
      return all.substr(start + prefix.size(), end - start - prefix.size());
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

StatusOr<std::string> InnerLogLevel::Choose(const char* override_value, const char* initial_value,
                                            const char* current_value,
                                            const char* override_variable,
                                            const char* inner_name) {
  if (override_value != nullptr) {
    if (!IsLevel(override_value)) {
      return InvalidArgument(std::string(override_variable) + " must be 0, 1, 2 or 3 (" +
                             inner_name + "'s minimum " +
                             "log level: INFO, WARNING, ERROR, FATAL), got '" + override_value +
                             "'");
    }
    return std::string(override_value);
  }
  // The user's TF_CPP_MIN_LOG_LEVEL, as XLA's own plugins would read it, unless it is JAX's
  // default: `import jax` sets it, and every child process of a JAX program inherits it.
  for (const char* value : {initial_value, current_value}) {
    if (value != nullptr && std::strcmp(value, kJaxDefault) != 0) return std::string(value);
  }
  return std::string(kQuietLevel);
}

StatusOr<std::optional<InnerLogLevel>> InnerLogLevel::ForThisProcess(
    const InnerPluginName& plugin) {
  const char* override_variable = plugin.log_level_variable.c_str();
  const std::optional<std::string> initial = InitialValue(kVariable);
  PJRTKIT_ASSIGN_OR_RETURN(
      std::string level,
      Choose(std::getenv(override_variable), initial.has_value() ? initial->c_str() : nullptr,
             std::getenv(kVariable), override_variable, plugin.display.c_str()));
  std::optional<InnerLogLevel> scoped;
  scoped.emplace(std::move(level));
  return scoped;
}

InnerLogLevel::InnerLogLevel(std::string level) : level_(std::move(level)) {
  const char* previous = std::getenv(kVariable);
  if (previous != nullptr) previous_ = previous;
  if (previous_.has_value() && *previous_ == level_) return;  // Nothing to change.
  active_ = setenv(kVariable, level_.c_str(), /*overwrite=*/1) == 0;
}

InnerLogLevel::InnerLogLevel(InnerLogLevel&& other) noexcept
    : level_(std::move(other.level_)), previous_(std::move(other.previous_)),
      active_(other.active_) {
  other.active_ = false;
}

InnerLogLevel::~InnerLogLevel() {
  if (!active_) return;
  const char* now = std::getenv(kVariable);
  if (now == nullptr || level_ != now) return;  // Changed by someone else: theirs now.
  if (previous_.has_value()) {
    setenv(kVariable, previous_->c_str(), /*overwrite=*/1);
  } else {
    unsetenv(kVariable);
  }
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
