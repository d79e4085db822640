#!/bin/sh
# Runs one Python test file under the oldest supported jax/jaxlib (.venv-jax-oldest), the way
# py_test runs it under .venv: from the runfiles root, with the workspace and python/ importable.
# Usage (from jax_py_test): run_on_oldest_jax.sh <interpreter> <test.py> [args...]
set -eu
interpreter=$1
test_file=$2
shift 2
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"
PYTHONPATH="$PWD:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
exec "$interpreter" "$test_file" "$@"
