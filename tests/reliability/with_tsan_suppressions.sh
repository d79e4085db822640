#!/usr/bin/env bash
# Runs a test with pjrtkit's ThreadSanitizer suppressions (tsan.supp beside this script) named by
# an absolute path, so that they load whatever the test's package depth: .bazelrc's
# `test:tsan --run_under=//tests/reliability:with_tsan_suppressions` puts it in front of every
# test under --config=tsan (Bazel adds this target's runfiles, tsan.supp, to each test's).
# A TSAN_OPTIONS the caller set (--test_env) is kept after the suppressions.
set -euo pipefail
supp="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-pjrtkit}/tests/reliability/tsan.supp"
if [ ! -f "$supp" ]; then
  supp="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tsan.supp"
fi
if [ ! -f "$supp" ]; then
  echo "with_tsan_suppressions: tests/reliability/tsan.supp is not in the test's runfiles" >&2
  exit 1
fi
export TSAN_OPTIONS="suppressions=$supp${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
exec "$@"
