#!/usr/bin/env bash
# Sets up a pjrtkit checkout on Debian: system packages (Bazel 4.2.3 from bazel-bootstrap, gtest,
# a C++ compiler, clang with libFuzzer for //tests/fuzz), the project virtualenv .venv on Python 3.12 with requirements.lock,
# OpenXLA's PJRT C API headers (tools/pjrt_headers), the plugin built by Bazel, and pjrtkit installed into .venv in development mode against that build.
# Idempotent: a second run installs nothing when nothing changed and only lets Bazel check the build.
#
#   --oldest-jax   also make .venv-jax-oldest from requirements-jax-oldest.lock (the oldest jax/jaxlib
#                  pjrtkit supports), on which `bazel test //...` runs every JAX-facing test a second
#                  time (tools/test.sh passes it).
set -euo pipefail
oldest_jax=0
for arg in "$@"; do
  case "$arg" in
    --oldest-jax) oldest_jax=1 ;;
    *) echo "[setup] unknown argument '$arg' (accepted: --oldest-jax)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
ROOT=$(pwd)
log() { echo "[setup] $*" >&2; }

# --- 1. System packages (only the missing ones). ---------------------------------------------
need=()
command -v bazel-4 >/dev/null 2>&1 || need+=(bazel-bootstrap)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
# clang and its libFuzzer/sanitizer runtimes: //tests/fuzz builds its fuzzers with them.
command -v clang++ >/dev/null 2>&1 || need+=(clang)
[ -f "$(clang++ -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a" ] || \
  need+=(libclang-rt-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  log "installing Debian packages: ${need[*]}"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
# /usr/bin/bazel (Debian's wrapper) runs /usr/bin/bazel-<.bazelversion>.
want=$(cat .bazelversion)
if [ ! -x "/usr/bin/bazel-$want" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO ln -sf bazel-4 "/usr/bin/bazel-$want"
fi

# --- 2. Python 3.12. -------------------------------------------------------------------------
find_python() {
  local c
  for c in "${PJRTKIT_PYTHON:-}" python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12 \
           /root/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do
    [ -n "$c" ] || continue
    if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then
      command -v "$c" 2>/dev/null || echo "$c"; return 0
    fi
  done
  return 1
}
PY=$(find_python) || { log "Python 3.12 not found (set PJRTKIT_PYTHON=/path/to/python3.12)"; exit 1; }

# --- 3. The project virtualenvs, each reinstalled only when its lock file changes. -------------
# make_venv DIR LOCK: a Python 3.12 virtualenv at DIR holding exactly LOCK.
make_venv() {
  local dir=$1 lock=$2 hash
  if [ -L "$dir" ] || { [ -e "$dir" ] && ! "$dir/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; }; then
    log "replacing $dir (not a Python 3.12 virtualenv)"; rm -rf "$dir"
  fi
  [ -x "$dir/bin/python" ] || { log "creating $dir with $PY"; "$PY" -m venv "$dir"; }
  hash=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ "$(cat "$dir/.pjrtkit-lock" 2>/dev/null)" != "$hash" ]; then
    log "installing $lock into $dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$lock"
    echo "$hash" > "$dir/.pjrtkit-lock"
  fi
}
make_venv .venv requirements.lock
if [ "$oldest_jax" = 1 ]; then make_venv .venv-jax-oldest requirements-jax-oldest.lock; fi
# install_tokamax_reference VENV: Tokamax 0.0.17 and what it imports (the pinned list
# tools/kernels_gpu/tokamax_wheels.txt, pure-Python wheels) in VENV/tokamax-reference, beside
# the venv's packages, not among them: kernels/tokamax_parity_test.py compares pjrtkit.kernels
# with Tokamax's own "xla" implementations from there.
install_tokamax_reference() {
  local dir=$1/tokamax-reference list=tools/kernels_gpu/tokamax_wheels.txt hash
  hash=$(sha256sum "$list" | cut -d' ' -f1)
  if [ "$(cat "$dir/.pjrtkit-lock" 2>/dev/null)" != "$hash" ]; then
    log "installing Tokamax (the parity tests' reference) into $dir"
    rm -rf "$dir"
    "$1/bin/python" -m pip install -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --target "$dir" -r <(grep -v '^#' "$list" | grep .)
    echo "$hash" > "$dir/.pjrtkit-lock"
  fi
}
if [ "$oldest_jax" = 1 ]; then
  install_tokamax_reference .venv
  install_tokamax_reference .venv-jax-oldest
fi
# OpenXLA's PJRT C API headers, as tools/pjrt_headers/headers.lock pins them (a few hundred KB
# read out of a PyPI wheel, cached in ~/.cache/pjrtkit; nothing when they are already there).
"$PY" tools/pjrt_headers/fetch_headers.py --dest .venv/pjrt_headers

# --- 4. Build the plugin and install pjrtkit in development mode against it. ----------------
log "building //xla_plugin:pjrtkit_plugin.so"
build_log=$(mktemp)
if ! bazel build //xla_plugin:pjrtkit_plugin.so //xla_plugin:build_info \
    //kernels/native:pjrtkit_kernels.so >"$build_log" 2>&1; then
  tail -n 60 "$build_log" >&2; rm -f "$build_log"; log "the plugin build failed"; exit 1
fi
grep -E "Elapsed time" "$build_log" >&2 || true
rm -f "$build_log"
pkg=python/jax_plugins/pjrtkit
for f in pjrtkit_plugin.so build_info.json; do
  cmp -s "bazel-bin/xla_plugin/$f" "$pkg/$f" || install -m 0644 "bazel-bin/xla_plugin/$f" "$pkg/$f"
done
# The native kernels' library next to their loader (pjrtkit.kernels.native.library finds it there).
cmp -s bazel-bin/kernels/native/pjrtkit_kernels.so kernels/native/pjrtkit_kernels.so || \
  install -m 0644 bazel-bin/kernels/native/pjrtkit_kernels.so kernels/native/pjrtkit_kernels.so
# install_dev VENV: pjrtkit in development mode into VENV (the install points at python/): once,
# and again when the installed pjrtkit is another tree's (a copied checkout's venv still imports
# the original's code).
install_dev() {
  local found
  found=$("$1/bin/python" -c 'import importlib.metadata as m, jax_plugins.pjrtkit as p, os
m.distribution("pjrtkit"); print(os.path.realpath(p.__file__))' 2>/dev/null || true)
  if [ "$found" != "$(realpath "$ROOT/python/jax_plugins/pjrtkit/__init__.py")" ]; then
    log "installing pjrtkit into $1 (development mode; found: ${found:-none})"
    "$1/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
      -e . --config-settings editable_mode=compat
  fi
}
install_dev .venv
if [ "$oldest_jax" = 1 ]; then install_dev .venv-jax-oldest; fi
log "ready: JAX_PLATFORMS=pjrtkit .venv/bin/python your_script.py"
