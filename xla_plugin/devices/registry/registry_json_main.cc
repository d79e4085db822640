// Prints Registry::ToJson(): the build writes it into build_info.json ("devices").
#include <cstdio>

#include "xla_plugin/devices/registry/registry.h"

int main() {
  std::printf("%s\n", pjrtkit::registry::Registry::ToJson().c_str());
  return 0;
}
