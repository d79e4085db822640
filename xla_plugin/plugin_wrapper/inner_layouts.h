// InnerLayouts: XLA:CPU's PJRT Layouts extension, through which the reference device learns the
// layouts XLA:CPU gives arrays: its default layouts, the full layout of a buffer (including the
// element size of packed sub-byte types, which PJRT_Buffer_GetMemoryLayout cannot express) and a
// compiled program's output layouts. Every answer is XLA:CPU's own serialization (xla::Layout
// text) decoded with client/layout_codec.h, so what pjrtkit reports is what XLA:CPU reports.
//
// What XLA:CPU (xla-cpu-pjrt 0.0.1) answers, checked by inner_layouts_test: default layouts are
// dense row-major for every element type, without an element size ("{0}" for s4[5]); buffers of
// sub-byte types report it ("{0:E(4)}"); a TOKEN default-layout query aborts the process (CHECK
// in xla::ShapeUtil::MakeShape), so DefaultLayout refuses TOKEN itself.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUTS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUTS_H_

// C++ standard library.
#include <cstdint>
#include <memory>
#include <vector>

// The Layouts extension ABI and the pjrtkit client layer.
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {

class InnerLayouts {
 public:
  // The Layouts extension of `inner`: UNIMPLEMENTED when its chain has none, or one smaller than
  // PJRT C API 0.81's (abi::kLayoutsExtensionSize).
  static StatusOr<InnerLayouts> Find(std::shared_ptr<const InnerApi> inner);

  // XLA:CPU's default layout for an array of `type` and `dims` on `client` (an inner client).
  // INVALID_ARGUMENT for TOKEN and kInvalid (XLA:CPU aborts on them) and negative dimensions.
  StatusOr<MemoryLayout> DefaultLayout(PJRT_Client* client, ElementType type,
                                       const std::vector<int64_t>& dims) const;

  // The layout of inner buffer `buffer`, in full (element size included).
  StatusOr<MemoryLayout> BufferLayout(PJRT_Buffer* buffer) const;

  // The output layouts of inner executable `executable` (owned by it; not destroyed here).
  StatusOr<std::vector<MemoryLayout>> OutputLayouts(PJRT_Executable* executable) const;
  // Its parameter layouts, likewise; UNIMPLEMENTED when the extension is the 72-byte one of PJRT
  // C API 0.81, which has no GetParameterLayouts.
  StatusOr<std::vector<MemoryLayout>> ParameterLayouts(PJRT_Executable* executable) const;

 private:
  InnerLayouts(std::shared_ptr<const InnerApi> inner, const abi::LayoutsExtension* extension)
      : inner_(std::move(inner)), extension_(extension) {}

  // Serializes `layout` with XLA:CPU and decodes the text; destroys `layout` when `owned`.
  StatusOr<MemoryLayout> Decode(PJRT_Layouts_MemoryLayout* layout, bool owned) const;

  std::shared_ptr<const InnerApi> inner_;     // Keeps the table (and the extension) alive.
  const abi::LayoutsExtension* extension_;  // In the inner plugin's extension chain.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_LAYOUTS_H_
