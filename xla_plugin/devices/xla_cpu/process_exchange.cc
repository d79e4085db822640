#include "xla_plugin/devices/xla_cpu/process_exchange.h"

#include <chrono>

namespace pjrtkit {
namespace xla_cpu {
namespace {

constexpr char kVersionField[] = "pjrtkit_version=";
constexpr char kDevicesField[] = ";devices=";

}  // namespace

std::string ProcessExchange::Entry(const std::string& version, int device_count) {
  return kVersionField + version + kDevicesField + std::to_string(device_count);
}

std::string ProcessExchange::Key(int index) {
  return "pjrtkit/xla_cpu/process/" + std::to_string(index);
}

StatusOr<std::vector<int>> ProcessExchange::Run(const MultiProcess& job, int device_count,
                                                const std::string& version, int timeout_ms) {
  const int me = job.process_index();
  std::vector<int> counts(job.num_processes(), 0);
  counts[me] = device_count;
  if (!job.is_multi_process()) return counts;
  PJRTKIT_RETURN_IF_ERROR(job.store()->Put(Key(me), Entry(version, device_count)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int other = 0; other < job.num_processes(); ++other) {
    if (other == me) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    StatusOr<std::string> entry =
        job.store()->Get(Key(other), static_cast<int>(std::max<int64_t>(left.count(), 1)));
    if (!entry.ok() && entry.status().code() != StatusCode::kDeadlineExceeded &&
        entry.status().code() != StatusCode::kNotFound) {
      // The store itself failed (coordination service gone, cancelled, ...): say so, keep its code.
      return Status(entry.status().code(),
                    "pjrtkit (xla_cpu): reading process " + std::to_string(other) +
                        "'s entry from the framework's key-value store failed; this is process " +
                        std::to_string(me) + " (" + entry.status().message() + ")");
    }
    if (!entry.ok()) {
      return Status(StatusCode::kDeadlineExceeded,
                    "pjrtkit (xla_cpu): process " + std::to_string(other) + " of " +
                        std::to_string(job.num_processes()) +
                        " did not create its pjrtkit client within " +
                        std::to_string(timeout_ms / 1000) +
                        " s (create option 'process_join_timeout_s'); this is process " +
                        std::to_string(me) + " (" + entry.status().message() + ")");
    }
    const size_t devices_at = entry->find(kDevicesField);
    if (entry->rfind(kVersionField, 0) != 0 || devices_at == std::string::npos) {
      return InvalidArgument("pjrtkit (xla_cpu): process " + std::to_string(other) +
                             " published '" + *entry + "' under " + Key(other) +
                             ", which is not a pjrtkit entry");
    }
    const std::string theirs =
        entry->substr(sizeof(kVersionField) - 1, devices_at - (sizeof(kVersionField) - 1));
    if (theirs != version) {
      return FailedPrecondition("pjrtkit version mismatch across processes: process " +
                                std::to_string(me) + " runs pjrtkit " + version + ", process " +
                                std::to_string(other) + " runs pjrtkit " + theirs +
                                "; every process of a job must run the same pjrtkit");
    }
    const std::string count = entry->substr(devices_at + sizeof(kDevicesField) - 1);
    bool digits = !count.empty() && count.size() <= 4;
    for (char c : count) digits = digits && c >= '0' && c <= '9';
    if (!digits) {
      return InvalidArgument("pjrtkit (xla_cpu): process " + std::to_string(other) +
                             " published a bad device count in '" + *entry + "'");
    }
    counts[other] = std::stoi(count);
  }
  return counts;
}

}  // namespace xla_cpu
}  // namespace pjrtkit
