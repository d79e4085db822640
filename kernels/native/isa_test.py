"""The native kernel library's instruction sets, read off its machine code: only functions of the
avx512 variant use EVEX (AVX-512) encodings, and only those of the avx2 and avx512 variants use
VEX (AVX/AVX2) ones. The FFI handlers pick a variant by what the CPU supports; code shared by the
variants (the standard library's templates, the handlers) must run on any x86-64. With TU-wide
-mavx512f flags the linker keeps the avx512 object's copy of std::vector's fill for all three, and
the avx2 path dies with SIGILL on a CPU with AVX2 only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

_HEADER = re.compile(r"^[0-9a-f]+ <(.+)>:$")
_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)")
# Prefixes that may precede a VEX/EVEX prefix: address size and segment overrides.
_SKIPPED = {"67", "2e", "3e", "26", "64", "65", "36"}


def _library() -> Path:
  env = os.environ.get("PJRTKIT_KERNELS_LIBRARY")
  return Path(env) if env else Path(__file__).with_name("pjrtkit_kernels.so")


def encodings(objdump_text: str) -> dict[str, set[str]]:
  """Function name -> the vector encodings its instructions use ("vex", "evex"), from `objdump
  -d -C --wide` output. In 64-bit code a first opcode byte of 0xc4/0xc5 is always VEX and 0x62
  always EVEX."""
  used: dict[str, set[str]] = {}
  name = None
  for line in objdump_text.splitlines():
    header = _HEADER.match(line)
    if header:
      name = header.group(1)
      used.setdefault(name, set())
      continue
    instruction = _INSTRUCTION.match(line)
    if name is None or not instruction:
      continue
    code = [b for b in instruction.group(1).split() if b not in _SKIPPED]
    if code and code[0] == "62":
      used[name].add("evex")
    elif code and code[0] in ("c4", "c5"):
      used[name].add("vex")
  return used


def test_encodings_reads_vex_and_evex():
  text = ("0000000000001000 <ns::avx512::F()>:\n"
          "    1000:\t62 f2 7d 48 18 c0 \tvbroadcastss %xmm0,%zmm0\n"
          "0000000000001010 <ns::avx2::G()>:\n"
          "    1010:\tc5 fc 28 c1          \tvmovaps %ymm1,%ymm0\n"
          "    1014:\t67 c4 e2 7d 18 00    \tvbroadcastss (%eax),%ymm0\n"
          "0000000000001020 <std::H()>:\n"
          "    1020:\t66 0f 6f c1          \tmovdqa %xmm1,%xmm0\n"
          "    1024:\tc3                   \tret\n")
  assert encodings(text) == {"ns::avx512::F()": {"evex"}, "ns::avx2::G()": {"vex"},
                             "std::H()": set()}


def test_only_the_wide_variants_use_wide_encodings():
  library = _library()
  if not library.exists():
    pytest.fail(f"no native kernel library at {library} (PJRTKIT_KERNELS_LIBRARY)")
  text = subprocess.run(["objdump", "-d", "-C", "--wide", str(library)], capture_output=True,
                        text=True, check=True).stdout
  used = encodings(text)
  evex = {n for n, e in used.items() if "evex" in e}
  vex = {n for n, e in used.items() if "vex" in e}
  # The check reads real code: each wide variant does use its encodings.
  assert any("::avx512::" in n for n in evex), "no EVEX code in the avx512 variant"
  assert any("::avx2::" in n for n in vex), "no VEX code in the avx2 variant"
  assert sorted(n for n in evex if "::avx512::" not in n) == []
  assert sorted(n for n in vex if "::avx512::" not in n and "::avx2::" not in n) == []


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
