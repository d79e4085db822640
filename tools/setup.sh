#!/usr/bin/env bash
# Sets up a pjrtkit checkout on Debian: system packages (Bazel 4.2.3 from bazel-bootstrap, gtest,
# a C++ compiler), the project virtualenv .venv on Python 3.12 with requirements.lock, the plugin
# built by Bazel, and pjrtkit installed into .venv in development mode against that build.
# Idempotent: a second run installs nothing when nothing changed and only lets Bazel check the build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
log() { echo "[setup] $*" >&2; }

# --- 1. System packages (only the missing ones). ---------------------------------------------
need=()
command -v bazel-4 >/dev/null 2>&1 || need+=(bazel-bootstrap)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
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

# --- 3. The project virtualenv, reinstalled only when requirements.lock changes. ---------------
if [ -L .venv ] || { [ -e .venv ] && ! .venv/bin/python -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; }; then
  log "replacing .venv (not a Python 3.12 virtualenv)"; rm -rf .venv
fi
[ -x .venv/bin/python ] || { log "creating .venv with $PY"; "$PY" -m venv .venv; }
lock_hash=$(sha256sum requirements.lock | cut -d' ' -f1)
if [ "$(cat .venv/.pjrtkit-lock 2>/dev/null)" != "$lock_hash" ]; then
  log "installing requirements.lock into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.lock
  echo "$lock_hash" > .venv/.pjrtkit-lock
fi

# --- 4. Build the plugin and install pjrtkit in development mode against it. ----------------
log "building //xla_plugin:pjrtkit_plugin.so"
build_log=$(mktemp)
if ! bazel build //xla_plugin:pjrtkit_plugin.so //xla_plugin:build_info >"$build_log" 2>&1; then
  tail -n 60 "$build_log" >&2; rm -f "$build_log"; log "the plugin build failed"; exit 1
fi
grep -E "Elapsed time" "$build_log" >&2 || true
rm -f "$build_log"
pkg=python/jax_plugins/pjrtkit
for f in pjrtkit_plugin.so build_info.json; do
  cmp -s "bazel-bin/xla_plugin/$f" "$pkg/$f" || install -m 0644 "bazel-bin/xla_plugin/$f" "$pkg/$f"
done
if ! .venv/bin/python -c 'import importlib.metadata as m; m.distribution("pjrtkit")' 2>/dev/null; then
  log "installing pjrtkit into .venv (development mode)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
    -e . --config-settings editable_mode=compat
fi
log "ready: JAX_PLATFORMS=pjrtkit .venv/bin/python your_script.py"
