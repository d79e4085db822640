#!/usr/bin/env bash
# //tests/fuzz:fuzz_test: for each libFuzzer target, replays every input of regressions/<target>/
# and corpus/<target>/ once, then fuzzes for a bounded time from a copy of the corpus. Any crash,
# abort, sanitizer report (ASan, UBSan, LeakSanitizer) or oracle failure fails the test; the input
# that caused it is saved under the test's undeclared outputs (bazel-testlogs/tests/fuzz/fuzz_test/
# test.outputs/), to be added to regressions/ with the fix.
#
#   PJRTKIT_FUZZ_SECONDS   seconds of fuzzing per target (default 15; 0: replay only), e.g.
#                          bazel test //tests/fuzz:fuzz_test --test_env=PJRTKIT_FUZZ_SECONDS=600
#   PJRTKIT_FUZZ_SEED      libFuzzer's -seed (default 1): the same inputs in the same order on
#                          every run, so a run that passed here passes in CI, which explores a
#                          prefix of the same sequence when it is slower; 0 picks a new seed
#                          each run (what longer runs hunting for new findings want)
set -uo pipefail
here=tests/fuzz
seconds=${PJRTKIT_FUZZ_SECONDS:-15}
seed=${PJRTKIT_FUZZ_SEED:-1}
PJRTKIT_XLA_CPU_PLUGIN=$(realpath external/venv/xla_cpu_pjrt.so) || exit 1
export PJRTKIT_XLA_CPU_PLUGIN
export LSAN_OPTIONS="suppressions=$(realpath $here/lsan.supp)"
export UBSAN_OPTIONS=print_stacktrace=1
artifacts=${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}
work=${TEST_TMPDIR:-$(mktemp -d)}
failed=0
summary=""
for target in program_fuzzer executable_fuzzer compile_options_fuzzer create_options_fuzzer \
    serialization_fuzzer text_parser_fuzzer; do
  binary=$here/$target
  inputs=()
  for f in "$here"/regressions/"$target"/* "$here"/corpus/"$target"/*; do
    [ -f "$f" ] && inputs+=("$f")
  done
  echo "=== $target: replaying ${#inputs[@]} inputs (regressions and corpus)"
  if ! "$binary" -runs=1 -artifact_prefix="$artifacts/$target-replay-" "${inputs[@]}" \
      > "$work/$target.replay.log" 2>&1; then
    tail -n 60 "$work/$target.replay.log"
    echo "=== $target: FAILED on a regression or corpus input"
    failed=1
    continue
  fi
  [ "$seconds" -gt 0 ] || continue
  mkdir -p "$work/$target"
  cp "$here"/corpus/"$target"/* "$work/$target"/
  echo "=== $target: fuzzing for $seconds s"
  "$binary" -seed="$seed" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=3072 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$work/$target" > "$work/$target.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log")
  summary+="$target: ${runs:-?} executions in $seconds s, exit code $rc"$'\n'
  if [ "$rc" -ne 0 ]; then
    tail -n 80 "$work/$target.log"
    echo "=== $target: FAILED (exit code $rc); the input is in $artifacts"
    failed=1
  fi
done
echo "=== summary"
printf '%s' "$summary"
exit "$failed"
