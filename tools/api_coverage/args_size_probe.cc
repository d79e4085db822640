#include "tools/api_coverage/args_size_probe.h"

// C standard library / POSIX.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

// C++ standard library.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>

namespace api_coverage {
namespace {

// Writes all of `data` to `fd` (the pipe to the parent).
void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Reads `fd` to its end.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

}  // namespace

ArgsSizeProbe::ArgsSizeProbe(const PJRT_Api* api) : api_(api) {}

bool ArgsSizeProbe::ParseExpectedSize(const std::string& message, NamedSize* out) {
  static const std::regex pattern(R"(Unexpected (\S+) size: expected (\d+), got 1\b)");
  std::smatch match;
  if (!std::regex_search(message, match, pattern)) return false;
  out->name = match[1].str();
  out->size = static_cast<size_t>(std::strtoull(match[2].str().c_str(), nullptr, 10));
  return true;
}

std::string ArgsSizeProbe::DescribeError(PJRT_Error* error) const {
  // Record: "E <code>\n<message>"; code -1 when the plugin has no PJRT_Error_GetCode.
  int code = -1;
  std::string message;
  if (api_->PJRT_Error_GetCode != nullptr) {
    PJRT_Error_GetCode_Args args;
    std::memset(&args, 0, sizeof(args));
    args.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
    args.error = error;
    if (api_->PJRT_Error_GetCode(&args) == nullptr) code = static_cast<int>(args.code);
  }
  if (api_->PJRT_Error_Message != nullptr) {
    PJRT_Error_Message_Args args;
    std::memset(&args, 0, sizeof(args));
    args.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
    args.error = error;
    api_->PJRT_Error_Message(&args);
    if (args.message != nullptr) message.assign(args.message, args.message_size);
  }
  if (api_->PJRT_Error_Destroy != nullptr) {
    PJRT_Error_Destroy_Args args;
    std::memset(&args, 0, sizeof(args));
    args.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
    args.error = error;
    api_->PJRT_Error_Destroy(&args);
  }
  return "E " + std::to_string(code) + "\n" + message;
}

SlotAnswer ArgsSizeProbe::RunInChild(const std::function<PJRT_Error*(void*)>& call) const {
  SlotAnswer answer;  // kCrashed unless the child reports.
  int fds[2];
  if (pipe(fds) != 0) return answer;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return answer;
  }
  if (pid == 0) {  // Child: a crashing plugin's own diagnostics would only clutter the report.
    close(fds[0]);
    const int dev_null = open("/dev/null", O_WRONLY);
    if (dev_null >= 0) dup2(dev_null, STDERR_FILENO);
    alignas(16) unsigned char args[4096];
    std::memset(args, 0, sizeof(args));
    const size_t struct_size = 1;
    std::memcpy(args, &struct_size, sizeof(struct_size));
    PJRT_Error* error = call(args);
    WriteAll(fds[1], error == nullptr ? std::string("N\n") : DescribeError(error));
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  const std::string record = ReadAll(fds[0]);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || record.empty()) return answer;
  if (record.rfind("N\n", 0) == 0) {
    answer.kind = SlotAnswer::Kind::kNoError;
    return answer;
  }
  const size_t newline = record.find('\n');
  answer.kind = SlotAnswer::Kind::kError;
  answer.code = std::atoi(record.substr(2, newline - 2).c_str());
  answer.message = newline == std::string::npos ? "" : record.substr(newline + 1);
  return answer;
}

}  // namespace api_coverage
