// InnerLogLevel: keeps XLA:CPU's own log messages off unless the user asks for them.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_INNER_INNER_LOG_LEVEL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_INNER_INNER_LOG_LEVEL_H_

#include <optional>
#include <string>

#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace inner {

// XLA:CPU (xla_cpu_pjrt.so) links its own absl/TSL logging and exports nothing but GetPjrtApi, so
// its threshold can only be given through the environment variable it reads, once, at its first
// log message: TF_CPP_MIN_LOG_LEVEL (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL only). xla-cpu-pjrt
// 0.0.1 writes that first message while it creates its client (cpu_device_count). `import jax`
// sets TF_CPP_MIN_LOG_LEVEL=1 when it is unset, so left alone every pjrtkit run prints
// "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR" and
// "E0000 ... library_matcher.h:53] Unsupported fusion type: 5" to stderr.
//
// The level XLA:CPU gets (Choose): PJRTKIT_XLA_CPU_LOG_LEVEL when set (0..3); else the
// TF_CPP_MIN_LOG_LEVEL the user chose: the one the process was started with
// (/proc/self/environ), or one set in the process, unless it is JAX's default "1" (which every
// child process of a program that imported jax inherits, so it says nothing of the user's
// wish; PJRTKIT_XLA_CPU_LOG_LEVEL=1 asks for warnings); else 3.
// While an InnerLogLevel lives (pjrtkit creates its XLA:CPU client inside one),
// TF_CPP_MIN_LOG_LEVEL holds that level; its destructor puts back the value (or absence) it had,
// so the environment afterwards is the one before. Only XLA:CPU is affected: jaxlib read its own
// level when it was imported. Other threads that read or write the environment at that moment
// may see the temporary value.
class InnerLogLevel {
 public:
  // The variable XLA:CPU reads.
  static constexpr const char* kVariable = "TF_CPP_MIN_LOG_LEVEL";
  // pjrtkit's own switch, read first.
  static constexpr const char* kOverride = "PJRTKIT_XLA_CPU_LOG_LEVEL";
  // The value `import jax` sets when TF_CPP_MIN_LOG_LEVEL is unset.
  static constexpr const char* kJaxDefault = "1";
  // The level XLA:CPU gets when nobody chose one: fatal errors only.
  static constexpr const char* kQuietLevel = "3";

  // The level for XLA:CPU given the values of kOverride, of kVariable at process start and of
  // kVariable now (nullptr: unset). INVALID_ARGUMENT when `override_value` is not 0..3.
  // Errors name `override_variable`, the variable `override_value` came from, and `inner_name`.
  static StatusOr<std::string> Choose(const char* override_value, const char* initial_value,
                                      const char* current_value,
                                      const char* override_variable = kOverride,
                                      const char* inner_name = "XLA:CPU");
  // Choose() on this process's environment, reading `override_variable` instead of kOverride
  // (the xla_gpu device reads PJRTKIT_XLA_GPU_LOG_LEVEL); an InnerLogLevel that sets the result.
  static StatusOr<std::optional<InnerLogLevel>> ForThisProcess(
      const char* override_variable = kOverride, const char* inner_name = "XLA:CPU");

  // Sets kVariable to `level` until destruction.
  explicit InnerLogLevel(std::string level);
  // Puts kVariable back as it was, unless something else changed it meanwhile.
  ~InnerLogLevel();
  InnerLogLevel(InnerLogLevel&& other) noexcept;
  InnerLogLevel& operator=(InnerLogLevel&&) = delete;
  InnerLogLevel(const InnerLogLevel&) = delete;
  InnerLogLevel& operator=(const InnerLogLevel&) = delete;

  // The level XLA:CPU gets.
  const std::string& level() const { return level_; }

 private:
  std::string level_;                     // The value set.
  std::optional<std::string> previous_;   // kVariable before (nullopt: unset).
  bool active_ = false;                   // This object set kVariable and must restore it.
};

}  // namespace inner
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_INNER_INNER_LOG_LEVEL_H_
