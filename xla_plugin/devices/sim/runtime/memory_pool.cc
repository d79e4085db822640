#include "xla_plugin/devices/sim/runtime/memory_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace pjrtkit {
namespace sim {
namespace {

// "1.50 MiB (1572864 bytes)"; "40 bytes" below 1 KiB.
std::string FormatBytes(int64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  const std::string exact = std::to_string(bytes) + " bytes";
  if (bytes < 1024) return exact;
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  return std::string(text) + " (" + exact + ")";
}

// The size of a page of the system.
size_t PageSize() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

}  // namespace

StatusOr<std::shared_ptr<MemoryPool>> MemoryPool::Create(int device_id, int64_t capacity_bytes) {
  if (capacity_bytes < kBlockAlignment) {
    return InvalidArgument("sim device " + std::to_string(device_id) + ": a device memory of " +
                           std::to_string(capacity_bytes) + " bytes was asked for; at least " +
                           std::to_string(kBlockAlignment) + " bytes are needed");
  }
  const size_t page = PageSize();
  const size_t mapped = (static_cast<size_t>(capacity_bytes) + page - 1) / page * page;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    return ResourceExhausted("sim device " + std::to_string(device_id) + ": cannot reserve " +
                             FormatBytes(capacity_bytes) +
                             " of address space for its memory: " + std::strerror(error));
  }
  return std::shared_ptr<MemoryPool>(new MemoryPool(device_id, capacity_bytes, base, mapped));
}

MemoryPool::MemoryPool(int device_id, int64_t capacity, void* base, size_t mapped_bytes)
    : device_id_(device_id),
      base_(static_cast<uint8_t*>(base)),
      mapped_bytes_(mapped_bytes),
      allocator_(capacity) {}

MemoryPool::~MemoryPool() { munmap(base_, mapped_bytes_); }

StatusOr<std::shared_ptr<Allocation>> MemoryPool::Allocate(int64_t bytes,
                                                           std::string_view purpose) {
  if (bytes < 0) {
    return InvalidArgument("sim device " + std::to_string(device_id_) + ": allocation of " +
                           std::to_string(bytes) + " bytes for " + std::string(purpose) +
                           "; sizes must be >= 0");
  }
  std::optional<int64_t> offset;
  int64_t in_use = 0;
  int64_t largest_free = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    offset = allocator_.Allocate(bytes);
    if (offset.has_value()) {
      const int64_t block = BlockAllocator::BlockSize(bytes);
      ++num_allocs_;
      largest_alloc_size_ = std::max(largest_alloc_size_, block);
      peak_bytes_in_use_ = std::max(peak_bytes_in_use_, allocator_.bytes_in_use());
    } else {
      in_use = allocator_.bytes_in_use();
      largest_free = allocator_.largest_free_block();
    }
  }
  if (!offset.has_value()) {
    return ResourceExhausted("sim device " + std::to_string(device_id_) +
                             " is out of memory: cannot allocate " + FormatBytes(bytes) + " for " +
                             std::string(purpose) + "; " + FormatBytes(in_use) +
                             " in use, largest free block " + FormatBytes(largest_free) +
                             ", capacity " + FormatBytes(capacity()));
  }
  return std::make_shared<Allocation>(shared_from_this(), base_ + *offset, bytes, *offset,
                                      BlockAllocator::BlockSize(bytes));
}

void MemoryPool::Release(int64_t offset, int64_t block_size) {
  if (block_size >= kReleasePagesThreshold) {
    // The block is still ours (not yet free), so nobody else can be using these pages.
    const uintptr_t page = PageSize();
    const uintptr_t begin = reinterpret_cast<uintptr_t>(base_ + offset);
    const uintptr_t first = (begin + page - 1) / page * page;
    const uintptr_t last = (begin + static_cast<uintptr_t>(block_size)) / page * page;
    if (last > first) {
      // MADV_FREE: the kernel takes the pages when it needs memory; until then a block allocated
      // here again reuses them without a page fault (with MADV_DONTNEED every reuse faulted each
      // page in again and zeroed it: 40 % of an elementwise program's time on 64 MiB arrays).
      // Kernels before Linux 4.5 lack MADV_FREE (EINVAL): give the pages back at once there.
      void* start = reinterpret_cast<void*>(first);
      if (madvise(start, last - first, MADV_FREE) != 0) madvise(start, last - first, MADV_DONTNEED);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  allocator_.Free(offset, block_size);
}

MemoryStats MemoryPool::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats stats;
  stats.bytes_in_use = allocator_.bytes_in_use();
  stats.peak_bytes_in_use = peak_bytes_in_use_;
  stats.num_allocs = num_allocs_;
  stats.largest_alloc_size = largest_alloc_size_;
  stats.bytes_limit = allocator_.capacity();
  stats.largest_free_block_bytes = allocator_.largest_free_block();
  stats.pool_bytes = allocator_.capacity();
  stats.peak_pool_bytes = allocator_.capacity();
  return stats;
}

void MemoryPool::ClearPeaks() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_bytes_in_use_ = allocator_.bytes_in_use();
  largest_alloc_size_ = 0;
}

}  // namespace sim
}  // namespace pjrtkit
