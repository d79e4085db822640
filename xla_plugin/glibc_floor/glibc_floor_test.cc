// The stand-ins of glibc_floor.cc, reached through -Wl,--wrap in a binary linked like the plugin.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

// Throws through a frame of its own, so the unwinder looks up two functions' FDEs.
[[gnu::noinline]] int Thrower(int value) {
  if (value > 0) throw std::runtime_error("thrown " + std::to_string(value));
  return value;
}

[[gnu::noinline]] int Middle(int value) {
  std::vector<int> guard(3, value);  // A destructor to run while unwinding.
  return Thrower(value) + guard[0];
}

TEST(GlibcFloorTest, ExceptionsUnwindThroughTheStaticUnwinder) {
  for (int i = 1; i <= 3; ++i) {
    try {
      Middle(i);
      FAIL() << "no exception";
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()), "thrown " + std::to_string(i));
    }
  }
}

TEST(GlibcFloorTest, FindObjectFindsThisBinaryAndNothingAtNull) {
  dl_find_object found{};
  ASSERT_EQ(_dl_find_object(reinterpret_cast<void*>(&Middle), &found), 0);
  EXPECT_NE(found.dlfo_eh_frame, nullptr);
  EXPECT_LE(found.dlfo_map_start, reinterpret_cast<void*>(&Middle));
  EXPECT_GT(found.dlfo_map_end, reinterpret_cast<void*>(&Middle));
  dl_find_object none{};
  EXPECT_EQ(_dl_find_object(nullptr, &none), -1);
}

TEST(GlibcFloorTest, ThreadsJoinAndThreadLocalsAreTheirOwn) {
  thread_local int counter = 0;
  std::vector<int> seen(4, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &seen] {
      for (int k = 0; k <= i; ++k) ++counter;
      seen[i] = counter;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(counter, 0);
  std::thread detached([] {});
  detached.detach();
}

TEST(GlibcFloorTest, KeysOnceAndRwlocks) {
  pthread_key_t key;
  ASSERT_EQ(pthread_key_create(&key, nullptr), 0);
  int value = 7;
  ASSERT_EQ(pthread_setspecific(key, &value), 0);
  EXPECT_EQ(pthread_getspecific(key), &value);
  EXPECT_EQ(pthread_key_delete(key), 0);
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static int calls = 0;
  for (int i = 0; i < 3; ++i) pthread_once(&once, [] { ++calls; });
  EXPECT_EQ(calls, 1);
  std::shared_mutex mutex;
  {
    std::shared_lock<std::shared_mutex> first(mutex);
    std::shared_lock<std::shared_mutex> second(mutex);
    EXPECT_FALSE(mutex.try_lock());
  }
  std::unique_lock<std::shared_mutex> exclusive(mutex);
  EXPECT_TRUE(exclusive.owns_lock());
}

TEST(GlibcFloorTest, SteadyClockWaitsTimeOutAfterTheirDurationAndWake) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mutex);
  const auto start = std::chrono::steady_clock::now();
  const std::cv_status status = cv.wait_until(lock, start + std::chrono::milliseconds(50));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status, std::cv_status::timeout);
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_EQ(cv.wait_until(lock, start), std::cv_status::timeout);  // A past deadline.
  // A deadline at the clock's end (steady_clock::time_point::max()) must block until signalled:
  // a deadline that overflowed would time out (or fail) at once instead of returning 0.
  pthread_cond_t far_cond = PTHREAD_COND_INITIALIZER;
  pthread_mutex_t far_mutex = PTHREAD_MUTEX_INITIALIZER;
  bool signalled = false;
  pthread_mutex_lock(&far_mutex);
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    pthread_mutex_lock(&far_mutex);
    signalled = true;
    pthread_cond_signal(&far_cond);
    pthread_mutex_unlock(&far_mutex);
  });
  const timespec far{std::numeric_limits<time_t>::max(), 999999999};
  int far_rc = 0;
  while (!signalled && far_rc == 0) {
    far_rc = pthread_cond_clockwait(&far_cond, &far_mutex, CLOCK_MONOTONIC, &far);
  }
  pthread_mutex_unlock(&far_mutex);
  signaller.join();
  EXPECT_EQ(far_rc, 0);
  EXPECT_TRUE(signalled);
  bool ready = false;
  std::thread notifier([&] {
    std::lock_guard<std::mutex> guard(mutex);
    ready = true;
    cv.notify_one();
  });
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return ready; }));
  lock.unlock();
  notifier.join();
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
  timespec deadline{};
  EXPECT_EQ(pthread_cond_clockwait(&cond, &plain, CLOCK_PROCESS_CPUTIME_ID, &deadline), EINVAL);
  timespec bad{0, 1000000000};
  EXPECT_EQ(pthread_cond_clockwait(&cond, &plain, CLOCK_MONOTONIC, &bad), EINVAL);
}

TEST(GlibcFloorTest, Arc4randomAndRandomDeviceDrawFromTheKernel) {
  // std::random_device picks RDSEED where the CPU has it, so arc4random is called directly too,
  // and through the "arc4random" token.
  std::vector<uint32_t> direct;
  for (int i = 0; i < 8; ++i) direct.push_back(arc4random());
  std::random_device device("arc4random");
  std::vector<unsigned> tokens;
  for (int i = 0; i < 8; ++i) tokens.push_back(device());
  bool direct_differ = false;
  bool tokens_differ = false;
  for (uint32_t draw : direct) direct_differ = direct_differ || draw != direct[0];
  for (unsigned draw : tokens) tokens_differ = tokens_differ || draw != tokens[0];
  EXPECT_TRUE(direct_differ) << "8 equal arc4random draws";
  EXPECT_TRUE(tokens_differ) << "8 equal random_device draws";
}

TEST(GlibcFloorTest, StatAndFstatDescribeTheSameFile) {
  const std::string path = ::testing::TempDir() + "/glibc_floor_stat";
  { std::ofstream(path) << "12345"; }
  struct stat by_path {};
  ASSERT_EQ(stat(path.c_str(), &by_path), 0);
  EXPECT_EQ(by_path.st_size, 5);
  EXPECT_TRUE(S_ISREG(by_path.st_mode));
  FILE* file = std::fopen(path.c_str(), "r");
  ASSERT_NE(file, nullptr);
  struct stat64 by_fd {};
  ASSERT_EQ(fstat64(fileno(file), &by_fd), 0);
  std::fclose(file);
  EXPECT_EQ(by_fd.st_size, 5);
  EXPECT_EQ(by_fd.st_ino, by_path.st_ino);
  struct stat missing {};
  EXPECT_EQ(stat((path + ".none").c_str(), &missing), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST(GlibcFloorTest, DynamicLoading) {
  void* libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr) << dlerror();
  using Unary = double (*)(double);
  auto cosine = reinterpret_cast<Unary>(dlsym(libm, "cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(cosine), &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libm"), std::string::npos) << info.dli_fname;
  dlclose(libm);
  EXPECT_EQ(dlopen("libpjrtkit_no_such_library.so", RTLD_NOW), nullptr);
  const char* error = dlerror();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("libpjrtkit_no_such_library.so"), std::string::npos);
}

TEST(GlibcFloorTest, LibmValues) {
  volatile double one = 1.0;  // Not folded at compile time: the calls reach libm.
  EXPECT_EQ(std::exp(one), 2.718281828459045);
  EXPECT_EQ(std::exp(-one * 1000), 0.0);
  EXPECT_EQ(std::log(one * 8), 2.0794415416798357);
  EXPECT_EQ(std::log(one), 0.0);
  EXPECT_EQ(std::pow(one * 2, 10.0), 1024.0);
  EXPECT_EQ(std::pow(one * 2, 0.5), 1.4142135623730951);
  EXPECT_EQ(std::hypot(one * 3, 4.0), 5.0);
  EXPECT_TRUE(std::isinf(std::hypot(one * INFINITY, NAN)));
}

// The versions this test binary needs, as `objdump -T` lists its undefined dynamic symbols:
// GLIBC_2.27 at the newest (but __libc_start_main, which only an executable's startup code
// calls), and nothing from libstdc++ or libgcc_s: `readelf -d` lists glibc's libraries only.
std::string Output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0;) out.append(chunk, n);
  pclose(pipe);
  return out;
}

TEST(GlibcFloorTest, ThisBinaryNeedsNothingNewerThanTheFloor) {
  // /proc/PID/exe: in the command, /proc/self would be objdump itself.
  const std::string self = "/proc/" + std::to_string(getpid()) + "/exe";
  const std::string symbols = Output("objdump -T " + self);
  ASSERT_NE(symbols.find("GLIBC_2.2.5"), std::string::npos) << symbols;
  std::vector<std::string> newer;
  size_t line_start = 0;
  while (line_start < symbols.size()) {
    size_t line_end = symbols.find('\n', line_start);
    if (line_end == std::string::npos) line_end = symbols.size();
    const std::string line = symbols.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    const size_t at = line.find("GLIBC_2.");
    if (at == std::string::npos || line.find("__libc_start_main") != std::string::npos) continue;
    if (std::atoi(line.c_str() + at + 8) > 27) newer.push_back(line);
  }
  EXPECT_TRUE(newer.empty()) << ::testing::PrintToString(newer);
  EXPECT_EQ(symbols.find("GLIBCXX"), std::string::npos) << symbols;
  EXPECT_EQ(symbols.find("CXXABI"), std::string::npos) << symbols;
  const std::string dynamic = Output("readelf -d " + self);
  std::vector<std::string> needed;
  const std::string marker = "Shared library: [";
  for (size_t at = dynamic.find(marker); at != std::string::npos;
       at = dynamic.find(marker, at + 1)) {
    const size_t start = at + marker.size();
    needed.push_back(dynamic.substr(start, dynamic.find(']', start) - start));
  }
  std::sort(needed.begin(), needed.end());
  EXPECT_EQ(needed, (std::vector<std::string>{"ld-linux-x86-64.so.2", "libc.so.6", "libdl.so.2",
                                              "libm.so.6", "libpthread.so.0"}))
      << dynamic;
}

}  // namespace
