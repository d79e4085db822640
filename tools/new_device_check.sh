#!/usr/bin/env bash
# The device template end to end, as a forking team uses it: copies this checkout (tracked and
# untracked, not ignored files) to a scratch folder, registers TWO devices there, one from each
# starting point (`tools/new_device.py acme --from sim`: its own compiler and runtime;
# `tools/new_device.py beta --from xla_cpu`: over a wrapped plugin), checks that they touched
# nothing outside their folders but one registration line each, and runs the new devices' own
# tests (unit test, the PJRT C-API conformance suite with device=NAME, JAX's jit and a 2-device
# pmap psum on both JAX releases) and every test whose expectations are the device list.
# Registering devices must never break them.
#
# Which tests run: by default every test that depends on the registry at all: Bazel's reverse
# dependencies of //xla_plugin/devices/registry:registry (the only source of the device list in
# C++; the plugin library, build_info.json and the selection rules are built on it) and of
# devices.bzl (the list itself), queried in the scratch copy, so the new devices' own tests are
# in it. That set is complete: registering a device changes devices.bzl and the files of the new
# folders only, and a test outside that set has none of them among its inputs, so its result
# cannot change (Bazel would not even rerun it). The query must find the new devices' tests, or
# the check fails. Of the set, the `_oldest_jax` twins (the same test files on the oldest JAX
# release) run only for the new devices' own tests: what registering a device changes (the
# registry, build_info.json, the plugin's device list) reaches a twin exactly as it reaches its
# newest-JAX test, which runs; --with-oldest-jax runs them all (about 40 % more time). --readers
# runs only the tests that state expectations about the device list
# (REGISTRY_READERS, found with `git grep -l "build_info\|pjrtkit_devices\|devices.bzl\|
# Registry::" -- tests tools xla_plugin python`) and the new devices' folders; --all runs
# `bazel test //...`.
#
# Before testing, the scratch copy gets what tools/setup.sh installs (the plugin, build_info.json
# and the native kernels' library beside the Python packages). tools/test.sh runs this after
# `bazel test //...`; Bazel's disk cache (.bazelrc) lets the scratch build reuse that build's
# actions, so only what the new devices change is built again.
#
#   bash tools/new_device_check.sh [--readers|--all] [--with-oldest-jax] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
mode=rdeps
oldest_jax=0
SCRATCH=""
for arg in "$@"; do
  case "$arg" in
    --all) mode=all ;;
    --readers) mode=readers ;;
    --with-oldest-jax) oldest_jax=1 ;;
    -*) echo "[new_device_check] unknown argument '$arg' (accepted: --readers, --all, --with-oldest-jax, SCRATCH_DIR)" >&2; exit 2 ;;
    *) SCRATCH=$arg ;;
  esac
done
SCRATCH="${SCRATCH:-$(mktemp -d /tmp/pjrtkit-new-device.XXXXXX)}"
DEVICES=(acme beta)
STARTS=(sim xla_cpu)
REGISTRY_READERS=(
  //xla_plugin/devices/registry:registry_test
  //xla_plugin/devices/selection:selection_test
  //tests/jax:device_registry_test
  //tests/jax:device_registry_test_oldest_jax
  //tests/jax:gpu_integration_test
  //tests/jax:gpu_integration_test_oldest_jax
  //tests/jax:sim_device_test
  //tools:new_device_test
)
log() { echo "[new_device_check] $*" >&2; }

rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$SCRATCH"
# The virtualenvs are the checkout's (Bazel's @venv and @venv_oldest_jax read them).
for venv in .venv .venv-jax-oldest; do
  [ -e "$ROOT/$venv" ] && ln -s "$ROOT/$venv" "$SCRATCH/$venv"
done
cd "$SCRATCH"
git init -q && git add -A && git -c user.name=check -c user.email=check@localhost commit -qm base
for i in "${!DEVICES[@]}"; do
  log "scratch copy in $SCRATCH; writing the device ${DEVICES[$i]} --from ${STARTS[$i]}"
  python3 tools/new_device.py "${DEVICES[$i]}" --from "${STARTS[$i]}"
done
# Nothing outside the new folders but devices.bzl's lines, one per device.
folders=()
for name in "${DEVICES[@]}"; do folders+=(-e "^?? xla_plugin/devices/$name/\$"); done
changed=$(git status --porcelain | grep -v "${folders[@]}" || true)
if [ "$changed" != " M xla_plugin/devices/registry/devices.bzl" ]; then
  log "the new devices changed more than devices.bzl outside their folders: $changed"; exit 1
fi
added=$(git diff --numstat xla_plugin/devices/registry/devices.bzl | awk '{print $1 "+" $2 "-"}')
if [ "$added" != "${#DEVICES[@]}+0-" ]; then
  log "devices.bzl: expected ${#DEVICES[@]} added lines, got $added"; exit 1
fi
# What tools/setup.sh installs after a device is added (the next step new_device.py prints): the
# plugin, its build_info.json and the native kernels' library beside the Python packages, where
# the tests that import pjrtkit from the source tree find them. (setup.sh itself would also
# reinstall the checkout's .venv in development mode against this scratch copy.)
log "building the plugin and installing it beside the Python packages, as tools/setup.sh does"
if ! bazel build //xla_plugin:pjrtkit_plugin.so //xla_plugin:build_info \
    //kernels/native:pjrtkit_kernels.so >"$SCRATCH/bazel_build.log" 2>&1; then
  tail -n 40 "$SCRATCH/bazel_build.log" >&2; log "the build failed"; exit 1
fi
install -m 0644 bazel-bin/xla_plugin/pjrtkit_plugin.so bazel-bin/xla_plugin/build_info.json \
  python/jax_plugins/pjrtkit/
install -m 0644 bazel-bin/kernels/native/pjrtkit_kernels.so kernels/native/
if [ "$mode" = all ]; then
  targets=(//...)
elif [ "$mode" = rdeps ]; then
  if ! bazel query --noshow_progress \
      'tests(rdeps(//..., //xla_plugin/devices/registry:registry) + rdeps(//..., //xla_plugin/devices/registry:devices.bzl))' \
      >"$SCRATCH/query.txt" 2>"$SCRATCH/query.log"; then
    tail -n 20 "$SCRATCH/query.log" >&2; log "bazel query failed (log: $SCRATCH/query.log)"; exit 1
  fi
  mapfile -t targets < "$SCRATCH/query.txt"
  if [ "$oldest_jax" -eq 0 ]; then
    new_folders=$(IFS='|'; echo "${DEVICES[*]}")
    mapfile -t targets < <(printf '%s\n' "${targets[@]}" |
      grep -Ev '_oldest_jax$' ; printf '%s\n' "${targets[@]}" |
      grep -E "^//xla_plugin/devices/($new_folders)[:/].*_oldest_jax$" || true)
  fi
else
  targets=("${REGISTRY_READERS[@]}")
  for name in "${DEVICES[@]}"; do targets+=("//xla_plugin/devices/$name/..."); done
fi
if [ "$mode" = rdeps ]; then
  for name in "${DEVICES[@]}"; do
    for test in "${name}_device_test" "${name}_conformance_test" "${name}_jax_test" \
                "${name}_jax_test_oldest_jax"; do
      if ! printf '%s\n' "${targets[@]}" | grep -qx "//xla_plugin/devices/$name:$test"; then
        tail -n 20 "$SCRATCH/query.log" >&2
        log "the query missed //xla_plugin/devices/$name:$test (${#targets[@]} targets in" \
            "$SCRATCH/query.txt)"; exit 1
      fi
    done
  done
fi
log "bazel test: ${#targets[@]} target patterns (log: $SCRATCH/bazel_test.log)"
set +e
bazel test "${targets[@]}" >"$SCRATCH/bazel_test.log" 2>&1
status=$?
set -e
grep -E "^//.* (FAILED|TIMEOUT|NO STATUS)|^Executed|^INFO: Elapsed|^ERROR" "$SCRATCH/bazel_test.log" >&2 || true
bazel shutdown >/dev/null 2>&1 || true
cd "$ROOT"
if [ "$status" -eq 0 ]; then rm -rf "$SCRATCH"; else log "failed; the scratch copy stays in $SCRATCH"; fi
exit "$status"
