// InnerPluginName: how errors and discovery name an inner PJRT plugin.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_PLUGIN_NAME_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_PLUGIN_NAME_H_

#include <string>

namespace pjrtkit {
namespace plugin_wrapper {

// The names of one inner plugin.
struct InnerPluginName {
  std::string display;      // In errors: "XLA:CPU", "XLA:GPU".
  std::string file;         // Library file name: "xla_cpu_pjrt.so", "xla_cuda_plugin.so".
  std::string path_option;  // pjrtkit create option giving its path: "xla_cpu_plugin_path".
  std::string package;      // Where it comes from: "the xla-cpu-pjrt wheel".
  // pjrtkit's switch for the inner plugin's log threshold (inner_log_level.h):
  // "PJRTKIT_XLA_CPU_LOG_LEVEL".
  std::string log_level_variable;
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_PLUGIN_NAME_H_
