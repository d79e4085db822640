#include "xla_plugin/c_api/trace/trace_sink.h"

// C and POSIX.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

// C++ standard library.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

namespace pjrtkit {
namespace capi {
namespace trace {

std::unique_ptr<TraceSink> TraceSink::FromSetting(const char* value,
                                                  std::vector<std::string> slot_names) {
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0) return nullptr;
  if (std::strcmp(value, "1") == 0) {
    return std::make_unique<TraceSink>(STDERR_FILENO, /*owns_fd=*/false, std::move(slot_names));
  }
  const int fd = ::open(value, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const std::string message = std::string("pjrtkit: PJRTKIT_TRACE: cannot open ") + value +
                                ": " + std::strerror(errno) + "; tracing is off\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    return nullptr;
  }
  return std::make_unique<TraceSink>(fd, /*owns_fd=*/true, std::move(slot_names));
}

TraceSink::TraceSink(int fd, bool owns_fd, std::vector<std::string> slot_names)
    : fd_(fd), owns_fd_(owns_fd) {
  slots_.resize(slot_names.size());
  for (size_t i = 0; i < slot_names.size(); ++i) slots_[i].name = std::move(slot_names[i]);
}

TraceSink::~TraceSink() {
  if (owns_fd_) ::close(fd_);
}

void TraceSink::WriteAll(const std::string& text) {
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // Tracing never fails a call.
    data += n;
    left -= static_cast<size_t>(n);
  }
}

void TraceSink::WriteLocked(size_t slot, const std::string& line, bool error, double micros) {
  SlotCounters& counters = slots_[slot];
  ++counters.calls;
  counters.errors += error ? 1 : 0;
  counters.total_us += micros;
  WriteAll(kLinePrefix + line + "\n");
}

std::string TraceSink::Summary() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const SlotCounters*> called;
  int64_t calls = 0, errors = 0;
  double total_us = 0;
  for (const SlotCounters& s : slots_) {
    if (s.calls == 0) continue;
    called.push_back(&s);
    calls += s.calls;
    errors += s.errors;
    total_us += s.total_us;
  }
  std::stable_sort(called.begin(), called.end(), [](const SlotCounters* a, const SlotCounters* b) {
    return a->total_us > b->total_us;
  });
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "%ssummary: %lld calls, %lld errors, %.1f us in %zu functions\n", kLinePrefix,
                static_cast<long long>(calls), static_cast<long long>(errors), total_us,
                called.size());
  std::string text = buffer;
  for (const SlotCounters* s : called) {
    std::snprintf(buffer, sizeof(buffer),
                  "%ssummary %s calls=%lld errors=%lld total_us=%.1f mean_us=%.2f\n", kLinePrefix,
                  s->name.c_str(), static_cast<long long>(s->calls),
                  static_cast<long long>(s->errors), s->total_us,
                  s->total_us / static_cast<double>(s->calls));
    text += buffer;
  }
  return text;
}

void TraceSink::WriteSummary() {
  const std::string text = Summary();
  std::lock_guard<std::mutex> lock(mu_);
  WriteAll(text);
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit
