#!/usr/bin/env bash
# Runs the PJRT C API 0.81 caller against pjrtkit and checks its result line: the values, and a
# plugin at least at the C API jaxlib 0.12 speaks (0.114).
set -euo pipefail
out=$("$1" "$(realpath "$2")" "$(realpath "$3")")
echo "$out"
if [[ ! "$out" =~ ^"caller 0.81: OK 1 2 3 4 (plugin at PJRT C API 0."([0-9]+)", bytes_in_use " ]]; then
  echo "FAIL: unexpected result line" >&2
  exit 1
fi
if (( BASH_REMATCH[1] < 114 )); then
  echo "FAIL: the plugin reports minor version ${BASH_REMATCH[1]}, expected >= 114" >&2
  exit 1
fi
