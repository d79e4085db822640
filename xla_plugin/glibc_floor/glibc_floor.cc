// The glibc floor of the plugin .so (README.md): definitions that the plugin's link routes
// glibc references to (-Wl,--wrap=SYMBOL makes every reference to SYMBOL, ours and those of the
// statically linked libstdc++ and libgcc, a reference to __wrap_SYMBOL), so that the .so needs no
// glibc symbol version newer than GLIBC_2.27 (jaxlib's manylinux_2_27) although it is built on a
// newer glibc:
//   - functions whose default version is newer but that exist under GLIBC_2.2.5 call that version
//     (bound with .symver);
//   - functions newer than the floor (pthread_cond_clockwait 2.30, _dl_find_object 2.35,
//     arc4random 2.36, stat/fstat64 2.33) are written here over older ones;
//   - __libc_single_threaded (2.32), a variable libstdc++ reads to skip atomics, is defined here as
//     0 ("there may be other threads"), so shared_ptr and friends always use atomics.
// x86_64 only (the versions are that architecture's); linked only into the plugin .so and this
// folder's test (glibc_floor.bzl).
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__) || !defined(__GLIBC__)
#error "glibc_floor is for x86_64 glibc builds only (glibc_floor.bzl selects it)"
#endif

// Declares `local` as the GLIBC_2.2.5 version of `name`: a call of `local` binds to name@GLIBC_2.2.5.
#define PJRTKIT_OLD_VERSION(local, name) __asm__(".symver " #local "," #name "@GLIBC_2.2.5")

// __wrap_NAME, which calls NAME@GLIBC_2.2.5: `params` is the parameter list with names, `args`
// the names in parentheses.
#define PJRTKIT_FORWARD_TO_2_2_5(ret, name, params, args) \
  ret pjrtkit_##name##_2_2_5 params;                      \
  PJRTKIT_OLD_VERSION(pjrtkit_##name##_2_2_5, name);      \
  ret __wrap_##name params { return pjrtkit_##name##_2_2_5 args; }

extern "C" {

// ---- Present at GLIBC_2.2.5 under another default version: call the old one. ----
PJRTKIT_FORWARD_TO_2_2_5(double, exp, (double x), (x))
PJRTKIT_FORWARD_TO_2_2_5(double, log, (double x), (x))
PJRTKIT_FORWARD_TO_2_2_5(double, pow, (double x, double y), (x, y))
PJRTKIT_FORWARD_TO_2_2_5(double, hypot, (double x, double y), (x, y))

PJRTKIT_FORWARD_TO_2_2_5(void*, dlopen, (const char* file, int mode), (file, mode))
PJRTKIT_FORWARD_TO_2_2_5(void*, dlsym, (void* handle, const char* name), (handle, name))
PJRTKIT_FORWARD_TO_2_2_5(char*, dlerror, (void), ())
PJRTKIT_FORWARD_TO_2_2_5(int, dladdr, (const void* address, Dl_info* info), (address, info))
PJRTKIT_FORWARD_TO_2_2_5(int, dlclose, (void* handle), (handle))

PJRTKIT_FORWARD_TO_2_2_5(int, pthread_create,
                         (pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                          void* arg),
                         (thread, attr, start, arg))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_detach, (pthread_t thread), (thread))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_join, (pthread_t thread, void** result), (thread, result))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_key_create, (pthread_key_t* key, void (*destructor)(void*)),
                         (key, destructor))
// libstdc++ takes a weak reference to __pthread_key_create to ask "are threads linked in?": this
// definition answers yes.
PJRTKIT_FORWARD_TO_2_2_5(int, __pthread_key_create,
                         (pthread_key_t* key, void (*destructor)(void*)), (key, destructor))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_key_delete, (pthread_key_t key), (key))
PJRTKIT_FORWARD_TO_2_2_5(void*, pthread_getspecific, (pthread_key_t key), (key))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_setspecific, (pthread_key_t key, const void* value),
                         (key, value))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_once, (pthread_once_t* once, void (*init)(void)),
                         (once, init))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_rwlock_rdlock, (pthread_rwlock_t* lock), (lock))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_rwlock_wrlock, (pthread_rwlock_t* lock), (lock))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_rwlock_unlock, (pthread_rwlock_t* lock), (lock))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t* lock), (lock))
PJRTKIT_FORWARD_TO_2_2_5(int, pthread_rwlock_trywrlock, (pthread_rwlock_t* lock), (lock))

// ---- stat and fstat64 (2.33): before 2.33 they were inline calls of __xstat / __fxstat64. ----
int pjrtkit_xstat_2_2_5(int, const char*, struct stat*);
int pjrtkit_fxstat64_2_2_5(int, int, struct stat64*);
PJRTKIT_OLD_VERSION(pjrtkit_xstat_2_2_5, __xstat);
PJRTKIT_OLD_VERSION(pjrtkit_fxstat64_2_2_5, __fxstat64);
constexpr int kStatVersion = 1;  // _STAT_VER_LINUX on x86_64.
int __wrap_stat(const char* path, struct stat* buf) {
  return pjrtkit_xstat_2_2_5(kStatVersion, path, buf);
}
int __wrap_fstat64(int fd, struct stat64* buf) {
  return pjrtkit_fxstat64_2_2_5(kStatVersion, fd, buf);
}

// ---- pthread_cond_clockwait (2.30): pthread_cond_timedwait, whose deadline is the condition
// variable's clock, CLOCK_REALTIME for every condition variable libstdc++ makes (the only caller);
// a CLOCK_MONOTONIC deadline becomes the same time from now on the realtime clock, so a wall-clock
// jump during the wait moves its end (as it did before glibc 2.30). Seconds saturate: a deadline
// at the clock's end (steady_clock::time_point::max()) waits until woken. ----
int __wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                  const struct timespec* deadline) {
  if (deadline == nullptr || deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000) {
    return EINVAL;
  }
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec now_monotonic;
  struct timespec now_realtime;
  clock_gettime(CLOCK_MONOTONIC, &now_monotonic);
  clock_gettime(CLOCK_REALTIME, &now_realtime);
  // Whole seconds and nanoseconds apart, each in range, so no sum below overflows.
  constexpr int64_t kMaxSeconds = INT64_MAX / 4;
  int64_t left_seconds = static_cast<int64_t>(deadline->tv_sec) - now_monotonic.tv_sec;
  int64_t left_ns = deadline->tv_nsec - now_monotonic.tv_nsec;
  if (deadline->tv_sec < now_monotonic.tv_sec ||
      (left_seconds == 0 && left_ns < 0)) {  // Past: time out at once.
    left_seconds = 0;
    left_ns = 0;
  }
  if (left_seconds > kMaxSeconds) left_seconds = kMaxSeconds;
  int64_t seconds = static_cast<int64_t>(now_realtime.tv_sec) + left_seconds;
  int64_t ns = now_realtime.tv_nsec + left_ns;  // In (-1e9, 2e9).
  if (ns < 0) {
    ns += 1000000000;
    seconds -= 1;
  } else if (ns >= 1000000000) {
    ns -= 1000000000;
    seconds += 1;
  }
  struct timespec realtime_deadline;
  realtime_deadline.tv_sec = static_cast<time_t>(seconds);
  realtime_deadline.tv_nsec = static_cast<long>(ns);
  return pthread_cond_timedwait(cond, mutex, &realtime_deadline);
}

// ---- arc4random (2.36), for std::random_device: getentropy (2.25), else /dev/urandom (a kernel
// without getrandom, or a seccomp filter refusing it); with neither the process aborts, as
// glibc's arc4random does when it has no entropy. ----
uint32_t __wrap_arc4random(void) {
  uint32_t value = 0;
  if (getentropy(&value, sizeof(value)) == 0) return value;
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    size_t got = 0;
    while (got < sizeof(value)) {
      const ssize_t n = read(fd, reinterpret_cast<char*>(&value) + got, sizeof(value) - got);
      if (n > 0) {
        got += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break;
      }
    }
    close(fd);
    if (got == sizeof(value)) return value;
  }
  abort();
}

// ---- _dl_find_object (2.35), for the unwinder of the static libgcc: the object holding `pc`
// and its PT_GNU_EH_FRAME, found with dl_iterate_phdr (2.2.4) as unwinders did before 2.35. ----
namespace {

struct FindObject {
  uintptr_t pc;                  // The address asked about.
  struct dl_find_object* out;    // Filled when found.
  bool found;                    // Whether an object holds pc.
};

int VisitObject(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* find = static_cast<FindObject*>(data);
  uintptr_t start = UINTPTR_MAX;
  uintptr_t end = 0;
  bool holds = false;
  void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD) {
      if (begin < start) start = begin;
      if (begin + header.p_memsz > end) end = begin + header.p_memsz;
      if (find->pc >= begin && find->pc < begin + header.p_memsz) holds = true;
    } else if (header.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(begin);
    }
  }
  if (!holds) return 0;
  find->out->dlfo_flags = 0;
  find->out->dlfo_map_start = reinterpret_cast<void*>(start);
  find->out->dlfo_map_end = reinterpret_cast<void*>(end);
  find->out->dlfo_link_map = nullptr;
  find->out->dlfo_eh_frame = eh_frame;
  find->found = true;
  return 1;
}

}  // namespace

int __wrap__dl_find_object(void* pc, struct dl_find_object* result) {
  FindObject find{reinterpret_cast<uintptr_t>(pc), result, false};
  dl_iterate_phdr(VisitObject, &find);
  return find.found ? 0 : -1;
}

// ---- __libc_single_threaded (2.32): never "single-threaded", so libstdc++ always uses atomics.
// Constant (read only, in .rodata): glibc writes its own copy, never this one. ----
extern const char __libc_single_threaded = 0;

}  // extern "C"
