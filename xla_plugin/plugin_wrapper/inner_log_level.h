// InnerLogLevel: keeps the inner plugin's own log messages off unless the user asks for them.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LOG_LEVEL_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LOG_LEVEL_H_

#include <optional>
#include <string>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/plugin_wrapper/inner_plugin_name.h"

namespace pjrtkit {
namespace plugin_wrapper {

// An inner plugin built from XLA (XLA:CPU's xla_cpu_pjrt.so, for example) links its own
// absl/TSL logging and exports nothing but GetPjrtApi, so its threshold can only be given through
// the environment variable it reads, once, at its first log message: TF_CPP_MIN_LOG_LEVEL (0 INFO,
// 1 WARNING, 2 ERROR, 3 FATAL only). XLA:CPU (xla-cpu-pjrt 0.0.1) writes that first message while
// it creates its client. `import jax` sets TF_CPP_MIN_LOG_LEVEL=1 when it is unset, so left alone
// every pjrtkit run on XLA:CPU printed "WARNING: All log messages before absl::InitializeLog() is
// called are written to STDERR" and "E0000 ... library_matcher.h:53] Unsupported fusion type: 5".
//
// The level the inner plugin gets (Choose): the device's own switch
// (InnerPluginName::log_level_variable, e.g. PJRTKIT_XLA_CPU_LOG_LEVEL) when set (0..3); else the
// TF_CPP_MIN_LOG_LEVEL the user chose: the one the process was started with
// (/proc/self/environ), or one set in the process, unless it is JAX's default "1" (which every
// child process of a program that imported jax inherits, so it says nothing of the user's
// wish; the switch set to 1 asks for warnings); else 3.
// While an InnerLogLevel lives (the factory creates its inner client inside one),
// TF_CPP_MIN_LOG_LEVEL holds that level; its destructor puts back the value (or absence) it had,
// so the environment afterwards is the one before. Only the inner plugin is affected: jaxlib read
// its own level when it was imported. Other threads that read or write the environment at that
// moment may see the temporary value.
class InnerLogLevel {
 public:
  // The variable the inner plugin reads.
  static constexpr const char* kVariable = "TF_CPP_MIN_LOG_LEVEL";
  // The value `import jax` sets when TF_CPP_MIN_LOG_LEVEL is unset.
  static constexpr const char* kJaxDefault = "1";
  // The level the inner plugin gets when nobody chose one: fatal errors only.
  static constexpr const char* kQuietLevel = "3";

  // The level for the inner plugin given the values of the device's switch, of kVariable at
  // process start and of kVariable now (nullptr: unset). INVALID_ARGUMENT when `override_value`
  // is not 0..3. Errors name `override_variable`, the variable `override_value` came from, and
  // `inner_name` ("XLA:CPU").
  static StatusOr<std::string> Choose(const char* override_value, const char* initial_value,
                                      const char* current_value, const char* override_variable,
                                      const char* inner_name);
  // Choose() on this process's environment for `plugin` (its log_level_variable and display
  // name); an InnerLogLevel that sets the result.
  static StatusOr<std::optional<InnerLogLevel>> ForThisProcess(const InnerPluginName& plugin);

  // Sets kVariable to `level` until destruction.
  explicit InnerLogLevel(std::string level);
  // Puts kVariable back as it was, unless something else changed it meanwhile.
  ~InnerLogLevel();
  InnerLogLevel(InnerLogLevel&& other) noexcept;
  InnerLogLevel& operator=(InnerLogLevel&&) = delete;
  InnerLogLevel(const InnerLogLevel&) = delete;
  InnerLogLevel& operator=(const InnerLogLevel&) = delete;

  // The level the inner plugin gets.
  const std::string& level() const { return level_; }

 private:
  std::string level_;                     // The value set.
  std::optional<std::string> previous_;   // kVariable before (nullopt: unset).
  bool active_ = false;                   // This object set kVariable and must restore it.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LOG_LEVEL_H_
