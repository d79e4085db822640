#!/usr/bin/env bash
# Downloads the wheels of tools/kernels_gpu/tokamax_wheels.txt (Tokamax 0.0.17 and what the H200
# image lacks for it) into DIR, for Python 3.12 on manylinux x86_64, checks their tags and their
# total size (under 40 MiB):   bash tools/kernels_gpu/download_wheels.sh DIR
# On the GPU machine: python3 -m pip install --upgrade --no-index --no-deps \
#   --target KIT/.pydeps KIT/wheels/*.whl
# and PYTHONPATH=KIT/.pydeps:KIT/tools/kernels_gpu/tokamax_shims (speed.sh does both).
set -euo pipefail
DIR="${1:?usage: download_wheels.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=${PYTHON:-$HERE/../../.venv/bin/python}
[ -x "$PY" ] || PY=python3.12
mkdir -p "$DIR"
rm -f "$DIR"/*.whl
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --abi cp312 --abi abi3 --abi none \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux_2_28_x86_64 --platform any \
  -d "$DIR" -r <(grep -v '^#' "$HERE/tokamax_wheels.txt" | grep .)
want=$(grep -v '^#' "$HERE/tokamax_wheels.txt" | grep -c .)
got=$(ls "$DIR"/*.whl | wc -l)
[ "$got" -eq "$want" ] || { echo "expected $want wheels, got $got" >&2; exit 1; }
for w in "$DIR"/*.whl; do
  case "$(basename "$w")" in
    *-py3-none-any.whl|*-py2.py3-none-any.whl|*-cp312-cp312-*manylinux*x86_64*.whl|*-abi3-*manylinux*x86_64*.whl) ;;
    *) echo "unexpected wheel tag: $w" >&2; exit 1 ;;
  esac
done
kib=$(du -sk "$DIR" | cut -f1)
(( kib < 40 * 1024 )) || { echo "wheels take $kib KiB, over 40 MiB" >&2; exit 1; }
echo "wheels: $got files, $kib KiB in $DIR"
