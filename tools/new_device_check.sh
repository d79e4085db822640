#!/usr/bin/env bash
# The device template, end to end: copies this checkout (tracked and untracked, not ignored files)
# to a scratch folder, runs `tools/new_device.py acme` there, and runs the new device's tests:
# its unit test, the PJRT C-API conformance suite on the plugin with device=acme, and JAX (jit
# and a 2-device pmap psum) on both JAX releases. It then checks that the new device touched
# nothing outside its folder but the one registration line. tools/test.sh runs it after
# `bazel test //...`; Bazel's disk cache (.bazelrc) makes the scratch build reuse that build's
# actions, so only the new device, the registry and the plugin's link are built again.
#
#   bash tools/new_device_check.sh [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SCRATCH="${1:-$(mktemp -d /tmp/pjrtkit-new-device.XXXXXX)}"
log() { echo "[new_device_check] $*" >&2; }

rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$SCRATCH"
# The virtualenvs are the checkout's (Bazel's @venv and @venv_oldest_jax read them).
for venv in .venv .venv-jax-oldest; do
  [ -e "$ROOT/$venv" ] && ln -s "$ROOT/$venv" "$SCRATCH/$venv"
done
cd "$SCRATCH"
git init -q && git add -A && git -c user.name=check -c user.email=check@localhost commit -qm base
log "scratch copy in $SCRATCH; writing the device acme"
python3 tools/new_device.py acme
# Nothing outside the new folder but devices.bzl's one line.
changed=$(git status --porcelain | grep -v '^?? xla_plugin/devices/acme/$' || true)
if [ "$changed" != " M xla_plugin/devices/registry/devices.bzl" ]; then
  log "the new device changed more than devices.bzl outside its folder: $changed"; exit 1
fi
added=$(git diff --numstat xla_plugin/devices/registry/devices.bzl | awk '{print $1 "+" $2 "-"}')
if [ "$added" != "1+0-" ]; then
  log "devices.bzl: expected one added line, got $added"; exit 1
fi
log "bazel test //xla_plugin/devices/acme/..."
set +e
bazel test //xla_plugin/devices/acme/... 2>&1 | tail -12
status=${PIPESTATUS[0]}
set -e
bazel shutdown >/dev/null 2>&1 || true
cd "$ROOT"
if [ "$status" -eq 0 ]; then rm -rf "$SCRATCH"; fi
exit "$status"
