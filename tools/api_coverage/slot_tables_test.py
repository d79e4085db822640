"""Tests of slot_tables.py: the tables from small reports, and the repository's
docs/reference/slots.md against the reports of the real plugins.

  slot_tables_test.py [API_COVERAGE PJRTKIT_SO XLA_CPU_SO FAKE_SO]   (Bazel passes them)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
import unittest

from tools.api_coverage import slot_tables
from tools.pjrt_headers import docs_section

_BINARIES: list[str] = []

_OURS = textwrap.dedent("""\
    # PJRT API coverage of ours.so

    | # | slot | status | functional |
    | --- | --- | --- | --- |
    | 1 | PJRT_Error_Destroy | implemented | ok |
    | 2 | PJRT_Client_DmaMap | UNIMPLEMENTED | not exercised |

    Summary: 1 implemented, 1 UNIMPLEMENTED, 0 NULL, 0 absent.
    Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 1 not exercised.

    ## Functional probe: within slots, and answers other than OK

    | call | functional | message |
    | --- | --- | --- |

    ## Extensions

    | # | type | ours.so | inner: theirs.so |
    | --- | --- | --- | --- |
    | 1 | PJRT_Extension_Type_FFI (5) | 48 | 48 |
    """)

_THEIRS = textwrap.dedent("""\
    | # | slot | status | functional |
    | --- | --- | --- | --- |
    | 1 | PJRT_Error_Destroy | implemented | ok |
    | 2 | PJRT_Client_DmaMap | absent (older plugin) | not exercised |

    Summary: 1 implemented, 0 UNIMPLEMENTED, 0 NULL, 1 absent.
    Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 1 not exercised.
    """)


class RenderTest(unittest.TestCase):

  def test_coverage_section(self):
    self.assertEqual(slot_tables.render_coverage(_OURS, _THEIRS), textwrap.dedent("""\
        pjrtkit: Summary: 1 implemented, 1 UNIMPLEMENTED, 0 NULL, 0 absent. Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 1 not exercised.

        XLA:CPU: Summary: 1 implemented, 0 UNIMPLEMENTED, 0 NULL, 1 absent. Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 1 not exercised.

        | # | PJRT_Api slot | pjrtkit: probe | pjrtkit: functional | OpenXLA XLA:CPU: probe | OpenXLA XLA:CPU: functional |
        | --- | --- | --- | --- | --- | --- |
        | 1 | `PJRT_Error_Destroy` | implemented | ok | implemented | ok |
        | 2 | `PJRT_Client_DmaMap` | UNIMPLEMENTED | not exercised | absent (older plugin) | not exercised |

        ### Extension chains

        | # | type | ours.so | inner: theirs.so |
        | --- | --- | --- | --- |
        | 1 | PJRT_Extension_Type_FFI (5) | 48 | 48 |
        """))

  def test_fake_section(self):
    self.assertEqual(slot_tables.render_fake(_OURS), textwrap.dedent("""\
        | # | slot | status | functional |
        | --- | --- | --- | --- |
        | 1 | PJRT_Error_Destroy | implemented | ok |
        | 2 | PJRT_Client_DmaMap | UNIMPLEMENTED | not exercised |

        Summary: 1 implemented, 1 UNIMPLEMENTED, 0 NULL, 0 absent.
        Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 1 not exercised.
        """))

  def test_reports_of_different_slots_are_refused(self):
    with self.assertRaisesRegex(ValueError, "different slots"):
      slot_tables.coverage_table(_OURS, _THEIRS.replace("| 2 | PJRT_Client_DmaMap", "| 3 | X"))
    with self.assertRaisesRegex(ValueError, "no extension section"):
      slot_tables.extensions_text(_THEIRS)


@unittest.skipUnless(_BINARIES or len(sys.argv) == 5, "needs the binaries (run under Bazel)")
class RepositoryTablesTest(unittest.TestCase):

  def test_docs_follow_the_plugins(self):
    tool, pjrtkit, xla_cpu, fake = _BINARIES
    ours, theirs, fake_report = slot_tables.run_reports(tool, pjrtkit, xla_cpu, fake)
    with open(os.path.join(slot_tables.REPO, slot_tables.DOCS), encoding="utf-8") as f:
      docs = f.read()
    self.assertEqual(docs_section.extract(docs, slot_tables.COVERAGE_SECTION),
                     slot_tables.render_coverage(ours, theirs),
                     "docs/reference/slots.md is stale: run slot_tables.py --write")
    self.assertEqual(docs_section.extract(docs, slot_tables.FAKE_SECTION),
                     slot_tables.render_fake(fake_report),
                     "docs/reference/slots.md is stale: run slot_tables.py --write")

  def test_write_then_check_on_a_copy(self):
    tool, pjrtkit, xla_cpu, fake = _BINARIES
    tmp = tempfile.mkdtemp(prefix="slot_tables_test.")
    self.addCleanup(shutil.rmtree, tmp)
    copy = os.path.join(tmp, "slots.md")
    with open(copy, "w", encoding="utf-8") as f:
      f.write(docs_section.begin_marker(slot_tables.COVERAGE_SECTION, "x") +
              "\nold\n<!-- END GENERATED -->\n" +
              docs_section.begin_marker(slot_tables.FAKE_SECTION, "x") +
              "\nold\n<!-- END GENERATED -->\n")
    args = ["--api-coverage", tool, "--pjrtkit", pjrtkit, "--xla-cpu", xla_cpu, "--fake", fake,
            "--docs", copy]
    self.assertEqual(slot_tables.main(args + ["--check"]), 1)
    self.assertEqual(slot_tables.main(args + ["--write"]), 0)
    self.assertEqual(slot_tables.main(args + ["--check"]), 0)


if __name__ == "__main__":
  if len(sys.argv) == 5:
    _BINARIES.extend(os.path.abspath(a) for a in sys.argv[1:])
    del sys.argv[1:]
  unittest.main()
