#include "xla_plugin/plugin_wrapper/output_info_cache.h"

#include <utility>

namespace pjrtkit {
namespace plugin_wrapper {

OutputInfoCache::OutputInfoCache(size_t num_keys) : by_key_(num_keys) {
  for (std::atomic<const Infos*>& entry : by_key_) entry.store(nullptr);
}

OutputInfoCache::~OutputInfoCache() {
  for (std::atomic<const Infos*>& entry : by_key_) delete entry.load();
}

const OutputInfoCache::Infos* OutputInfoCache::Find(int key) const {
  if (key < 0 || static_cast<size_t>(key) >= by_key_.size()) return nullptr;
  return by_key_[key].load(std::memory_order_acquire);
}

void OutputInfoCache::Remember(int key, Infos infos) {
  if (key < 0 || static_cast<size_t>(key) >= by_key_.size()) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::atomic<const Infos*>& entry = by_key_[key];
  if (entry.load(std::memory_order_relaxed) != nullptr) return;  // Published entries stay.
  entry.store(new Infos(std::move(infos)), std::memory_order_release);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
