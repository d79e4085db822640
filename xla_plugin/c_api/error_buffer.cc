#include "xla_plugin/c_api/error_buffer.h"

// C++ standard library.
#include <utility>

namespace pjrtkit {
namespace capi {

ErrorBuffer::ErrorBuffer(Status error, ElementType type, std::vector<int64_t> dims,
                         MemoryLayout layout, Device* device, Memory* memory)
    : error_(std::move(error)),
      type_(type),
      dims_(std::move(dims)),
      layout_(std::move(layout)),
      device_(device),
      memory_(memory),
      ready_(Event::CreateReady(error_)) {}

StatusOr<std::shared_ptr<Event>> ErrorBuffer::ToHostBuffer(void*, size_t, const MemoryLayout*) {
  return error_;
}

StatusOr<std::unique_ptr<Buffer>> ErrorBuffer::CopyToDevice(Device*) { return error_; }

StatusOr<std::unique_ptr<Buffer>> ErrorBuffer::CopyToMemory(Memory*) { return error_; }

StatusOr<std::shared_ptr<Event>> ErrorBuffer::CopyRawToHost(void*, int64_t, int64_t) {
  return error_;
}

}  // namespace capi
}  // namespace pjrtkit
