// OutputInfoCache: the metadata of an executable's outputs, per device, read once.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_OUTPUT_INFO_CACHE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_OUTPUT_INFO_CACHE_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "xla_plugin/plugin_wrapper/wrapped_buffer_info.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Output `i` of one executable on one device has the same element type, dimensions, layout,
// size and memory on every execution (static shapes), so WrappedLoadedExecutable::Execute reads
// the metadata of the first outputs with seven inner calls each and wraps later outputs with the
// remembered WrappedBufferInfo and no inner call. Entries are found by a small integer key that
// names the device (the argument-list index, or the device id for a portable executable).
// Thread-safe; Find takes no lock (it is on every Execute), Remember does.
class OutputInfoCache {
 public:
  // The metadata of every output, in output order.
  using Infos = std::vector<std::shared_ptr<const WrappedBufferInfo>>;

  // A cache for keys 0..num_keys-1.
  explicit OutputInfoCache(size_t num_keys);
  OutputInfoCache(const OutputInfoCache&) = delete;
  OutputInfoCache& operator=(const OutputInfoCache&) = delete;
  ~OutputInfoCache();

  // The outputs' metadata remembered under `key`, or nullptr before Remember was called for it
  // (or for a key out of range). Valid as long as the cache.
  const Infos* Find(int key) const;
  // Records `infos` (one per output, none null) under `key`; the first record wins.
  void Remember(int key, Infos infos);

 private:
  std::vector<std::atomic<const Infos*>> by_key_;  // Published entries.
  std::mutex mu_;                                      // Serialises Remember.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_OUTPUT_INFO_CACHE_H_
