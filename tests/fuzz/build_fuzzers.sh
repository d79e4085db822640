#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (Bazel's C++ toolchain is gcc, which has
# no libFuzzer): compiles the plugin's sources (what //xla_plugin:pjrtkit_plugin.so is linked
# from, listed by the :plugin_sources aspect) and the harness with
# -fsanitize=fuzzer-no-link,address,undefined, then links one binary per target.
#
#   build_fuzzers.sh OUT_DIR TARGET... -- SOURCE...
#
# OUT_DIR gets one executable per TARGET (TARGET.cc among SOURCE). Without clang++ or its libFuzzer
# runtime (Debian: clang, libclang-rt-dev; tools/setup.sh installs them) each output is a script
# that fails with that message instead, so `bazel build //...` still works and only the fuzz test
# fails.
set -euo pipefail
out=$1; shift
targets=()
while [ "$1" != "--" ]; do targets+=("$1"); shift; done
shift
mkdir -p "$out"

missing=""
if ! command -v clang++ >/dev/null 2>&1; then
  missing="clang++ is not installed"
elif [ ! -f "$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]; then
  missing="clang's libFuzzer runtime is not installed (Debian package libclang-rt-dev)"
fi
if [ -n "$missing" ]; then
  for t in "${targets[@]}"; do
    printf '#!/bin/sh\necho "%s: %s when it was built; run tools/setup.sh (it installs clang and libclang-rt-dev), then bazel clean (Bazel keeps this stub until tests/fuzz changes)" >&2\nexit 1\n' \
      "$t" "$missing" > "$out/$t"
    chmod +x "$out/$t"
  done
  exit 0
fi

flags=(-std=c++17 -O1 -gline-tables-only -fno-omit-frame-pointer -pthread -w
       -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I. -Iexternal/venv/include)
# Generated headers among SOURCE (bazel-out/CONFIG/bin/...) are included from their output root.
for src in "$@"; do
  case "$src" in
    bazel-out/*/bin/*) root=${src%%/bin/*}/bin; case " ${flags[*]} " in *" -I$root "*) ;; *) flags+=("-I$root") ;; esac ;;
  esac
done
objs=$(mktemp -d)
trap 'rm -rf "$objs"' EXIT
# xla_plugin/glibc_floor is left out: its stand-ins are reached only through the plugin's
# -Wl,--wrap link (and its constant __libc_single_threaded would take glibc's place in an
# executable); the fuzzers link the system's C and C++ runtimes as they are.
for src in "$@"; do
  case "$src" in
    external/*|xla_plugin/glibc_floor/*) ;;
    *.cc) echo "$src" ;;
  esac
done | xargs -P "$(nproc)" -I{} sh -c \
  'clang++ "$@" -c "{}" -o "'"$objs"'/$(echo "{}" | tr / _).o"' _ "${flags[@]}"
for t in "${targets[@]}"; do
  main=$(ls "$objs" | grep -E "(^|_)${t}\.cc\.o$")
  others=$(ls "$objs" | grep -vE "_fuzzer\.cc\.o$" | sed "s|^|$objs/|")
  # shellcheck disable=SC2086
  clang++ -fsanitize=fuzzer,address,undefined -pthread "$objs/$main" $others -ldl -o "$out/$t"
done
