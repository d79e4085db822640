"""Link options that give a binary pjrtkit's glibc floor (README.md): libstdc++ and libgcc linked
statically, and every glibc symbol whose default version is newer than GLIBC_2.27 routed to
glibc_floor.cc (-Wl,--wrap)."""

# The glibc symbols glibc_floor.cc stands in for; each has a __wrap_ definition there.
WRAPPED_SYMBOLS = [
    "__pthread_key_create",
    "_dl_find_object",
    "arc4random",
    "dladdr",
    "dlclose",
    "dlerror",
    "dlopen",
    "dlsym",
    "exp",
    "fstat64",
    "hypot",
    "log",
    "pow",
    "pthread_cond_clockwait",
    "pthread_create",
    "pthread_detach",
    "pthread_getspecific",
    "pthread_join",
    "pthread_key_create",
    "pthread_key_delete",
    "pthread_once",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_trywrlock",
    "pthread_rwlock_unlock",
    "pthread_rwlock_wrlock",
    "pthread_setspecific",
    "stat",
]

# For the linkopts of a cc_binary / cc_test that depends on //xla_plugin/glibc_floor (x86_64),
# with GLIBC_FLOOR_FEATURES as its features. The C++ runtime comes from libstdc++.a (named before
# the toolchain's -lstdc++, which --as-needed then drops) and libgcc from libgcc.a and
# libgcc_eh.a. libdl.so.2 and libpthread.so.0 are needed explicitly: below glibc 2.34 the
# GLIBC_2.2.5 dl* and pthread_* functions are theirs (from 2.34 on they are empty and libc has
# them). The link uses GNU ld (bfd): gold applies --wrap to a reference that names a version
# (pthread_once@GLIBC_2.2.5) as well, so a stand-in would call itself.
GLIBC_FLOOR_LINKOPTS = [
    "-fuse-ld=bfd",
    "-l:libstdc++.a",
    "-static-libgcc",
    "-Wl,--no-as-needed",
    "-l:libdl.so.2",
    "-l:libpthread.so.0",
    "-Wl,--as-needed",
] + ["-Wl,--wrap=" + symbol for symbol in WRAPPED_SYMBOLS]

# bfd has no --start-lib: the toolchain passes archives instead of object lists.
GLIBC_FLOOR_FEATURES = ["-supports_start_end_lib"]

def glibc_floor_linkopts():
    """GLIBC_FLOOR_LINKOPTS on x86_64 unless built with --define=glibc_floor=off (the sanitizer
    configs of .bazelrc: their runtimes expect the dynamic C++ runtime); [] elsewhere."""
    return select({
        "//xla_plugin/glibc_floor:off": [],
        "//xla_plugin/glibc_floor:x86_64": GLIBC_FLOOR_LINKOPTS,
        "//conditions:default": [],
    })

def glibc_floor_deps():
    """//xla_plugin/glibc_floor where glibc_floor_linkopts() applies."""
    return select({
        "//xla_plugin/glibc_floor:off": [],
        "//xla_plugin/glibc_floor:x86_64": ["//xla_plugin/glibc_floor"],
        "//conditions:default": [],
    })
