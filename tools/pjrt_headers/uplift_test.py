"""Tests of uplift.py: from the 0.81 header of xla-cpu-pjrt to the pinned 0.117 set, and the
files --write regenerates, in a scratch copy of the three files.

  uplift_test.py [OLD_PJRT_C_API_H NEW_PJRT_C_API_H]   (Bazel passes both; else the venv's)
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

from tools.pjrt_headers import docs_section
from tools.pjrt_headers import header_model
from tools.pjrt_headers import layout
from tools.pjrt_headers import uplift

_OLD = os.path.join(uplift.REPO, ".venv", "lib", "python3.12", "site-packages", "xla_plugins",
                    "xla_cpu_pjrt", "include", "pjrt_c_api.h")
_NEW = os.path.join(uplift.REPO, ".venv", "pjrt_headers", "xla", "pjrt", "c", "pjrt_c_api.h")

ADDED_SLOTS = [
    "PJRT_Client_CreateErrorBuffer",
    "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral",
    "PJRT_Buffer_CopyRawToHostFuture",
    "PJRT_Device_PoisonExecution",
    "PJRT_Device_CreateAsyncTrackingEvent",
    "PJRT_AsyncTrackingEvent_Destroy",
    "PJRT_Executable_GetCompileOptions",
    "PJRT_Buffer_DonateWithControlDependency",
    "PJRT_Event_Create",
    "PJRT_Event_Set",
    "PJRT_Device_GetAttributes",
    "PJRT_Client_Load",
    "PJRT_LoadedExecutable_AddressableDeviceLogicalIds",
    "PJRT_Buffer_Bitcast",
    "PJRT_Error_ForEachPayload",
    "PJRT_TopologyDescription_Fingerprint",
    "PJRT_Executable_ParameterMemoryKinds",
    "PJRT_Device_ClearMemoryStats",
    "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace",
    "PJRT_TopologyDescription_GetMemorySpaceKindIds",
]


class UpliftFrom081To117Test(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.old = header_model.load(os.path.dirname(_OLD))
    cls.new = header_model.load(os.path.dirname(_NEW))
    cls.old_layouts = layout.compute(cls.old)
    cls.new_layouts = layout.compute(cls.new)
    cls.diff = uplift.compare(cls.old, cls.new, cls.old_layouts, cls.new_layouts)

  def test_versions_and_slot_counts(self):
    self.assertEqual(self.diff.old_version, (0, 81))
    self.assertEqual(self.diff.new_version, (0, 117))
    self.assertEqual((self.diff.old_slots, self.diff.new_slots), (118, 138))

  def test_the_twenty_added_slots_in_header_order(self):
    self.assertEqual(self.diff.slots_added, ADDED_SLOTS)
    self.assertEqual(self.diff.slots_removed, [])

  def test_execute_options_gained_exactly_six_fields(self):
    change = self.diff.structs_changed["PJRT_ExecuteOptions"]
    self.assertEqual(change.added, [
        "multi_slice_config", "use_major_to_minor_data_layout_for_callbacks",
        "hlo_output_callbacks", "num_hlo_output_callbacks", "custom_options",
        "num_custom_options"])
    self.assertEqual((change.removed, change.retyped, change.moved), ([], [], []))
    self.assertEqual(change.size, (112, 160))
    self.assertEqual(change.struct_size_field, ("incarnation_ids", "num_custom_options"))

  def test_the_structs_that_grew(self):
    self.assertEqual(sorted(self.diff.structs_changed), [
        "PJRT_Api", "PJRT_Device_MemoryStats_Args", "PJRT_Executable_DeserializeAndLoad_Args",
        "PJRT_Executable_GetCompiledMemoryStats_Args", "PJRT_ExecuteOptions"])
    self.assertEqual(self.diff.structs_changed["PJRT_Api"].size, (984, 1144))
    self.assertEqual(self.diff.structs_changed["PJRT_Executable_DeserializeAndLoad_Args"].added,
                     ["load_options"])

  def test_buffer_type_gained_four_values(self):
    self.assertEqual(self.diff.enum_values_added["PJRT_Buffer_Type"], [
        ("PJRT_Buffer_Type_S1", 30), ("PJRT_Buffer_Type_U1", 31),
        ("PJRT_Buffer_Type_F6E2M3FN", 32), ("PJRT_Buffer_Type_F6E3M2FN", 33)])
    self.assertEqual(self.diff.enum_values_added["PJRT_Extension_Type"][0],
                     ("PJRT_Extension_Type_TpuTopology", 16))
    self.assertEqual(len(self.diff.enum_values_added["PJRT_Extension_Type"]), 9)
    self.assertEqual(self.diff.enum_values_removed, {})
    self.assertEqual(self.diff.enum_values_changed, {})

  def test_no_offset_of_a_struct_in_both_sets_moved(self):
    in_both = [n for n in self.new.structs if n in self.old.structs]
    self.assertEqual(len(in_both), 135)
    for name in in_both:
      for field, before in self.old_layouts[name].fields.items():
        self.assertEqual(self.new_layouts[name].fields[field].offset, before.offset,
                         f"{name}.{field}")
    self.assertEqual(self.diff.abi_breaks(), [])

  def test_new_structs_and_extension_versions(self):
    added = self.diff.structs_added
    self.assertEqual(sum(len(names) for names in added.values()), 153)
    self.assertEqual(added["pjrt_c_api_gpu_extension.h"],
                     ["PJRT_Gpu_Register_Custom_Call_Args", "PJRT_Gpu_Custom_Call"])
    self.assertEqual(self.diff.structs_removed, [])
    self.assertEqual(self.diff.extension_versions["PJRT_API_LAYOUTS_EXTENSION_VERSION"], (None, 4))
    self.assertEqual(len(self.diff.extension_versions), 15)

  def test_report_lines(self):
    report = uplift.format_report(self.diff).splitlines()
    self.assertEqual(report[:3], ["PJRT C API 0.81 -> 0.117",
                                  "Slots: 118 -> 138 (20 added, 0 removed)",
                                  "  + PJRT_Client_CreateErrorBuffer"])
    self.assertIn("Structs: 153 new, 0 removed, 5 changed", report)
    self.assertIn("  PJRT_ExecuteOptions: + multi_slice_config, "
                  "use_major_to_minor_data_layout_for_callbacks, hlo_output_callbacks, "
                  "num_hlo_output_callbacks, custom_options, num_custom_options; size 112 -> 160; "
                  "_STRUCT_SIZE ends at incarnation_ids -> num_custom_options", report)
    self.assertIn("  PJRT_Api: + the 20 slots above; size 984 -> 1144; _STRUCT_SIZE ends at "
                  "PJRT_LoadedExecutable_GetDeviceAssignment -> "
                  "PJRT_TopologyDescription_GetMemorySpaceKindIds", report)
    self.assertIn("  PJRT_Buffer_Type: + PJRT_Buffer_Type_S1 = 30, PJRT_Buffer_Type_U1 = 31, "
                  "PJRT_Buffer_Type_F6E2M3FN = 32, PJRT_Buffer_Type_F6E3M2FN = 33", report)
    self.assertIn("  PJRT_API_FFI_EXTENSION_VERSION: (none) -> 3", report)
    self.assertEqual(report[-1], "ABI breaks: 0 (no field removed, retyped or moved)")

  def test_abi_breaks_are_reported(self):
    old = header_model.load(os.path.dirname(_OLD))
    struct = old.structs["PJRT_ExecuteOptions"]
    fields = list(struct.fields)
    fields[6] = header_model.Field("launch_id", "int64_t launch_id")  # Was `int launch_id`.
    old.structs["PJRT_ExecuteOptions"] = header_model.Struct(struct.name, tuple(fields),
                                                             struct.header)
    shifted = dict(self.old_layouts)
    before = shifted["PJRT_ExecuteOptions"]
    moved = dict(before.fields)
    moved["context"] = layout.FieldLayout(64, 8)
    shifted["PJRT_ExecuteOptions"] = layout.StructLayout(before.size, moved, before.unions)
    value = shifted["PJRT_NamedValue"]
    self.assertEqual(value.unions, (layout.FieldLayout(40, 8),))
    shifted["PJRT_NamedValue"] = layout.StructLayout(value.size, value.fields,
                                                     (layout.FieldLayout(32, 8),))
    diff = uplift.compare(old, self.new, shifted, self.new_layouts)
    self.assertEqual(diff.abi_breaks(), [
        "PJRT_NamedValue: union 0 moved: offset 32 -> 40",
        "PJRT_ExecuteOptions.launch_id retyped: `int64_t launch_id` -> `int launch_id`",
        "PJRT_ExecuteOptions.context moved: offset 64 -> 72"])
    self.assertTrue(diff.structs_changed["PJRT_NamedValue"].breaks_abi())


class WriteAndCheckTest(unittest.TestCase):
  """--write and --check on a scratch repository holding the three files at 0.81."""

  def setUp(self):
    super().setUp()
    self.repo = tempfile.mkdtemp(prefix="uplift_test.")
    self.old = header_model.load(os.path.dirname(_OLD))
    self.new = header_model.load(os.path.dirname(_NEW))
    for path in (uplift.SLOTS_INC, uplift.DECISIONS, uplift.DOCS):
      os.makedirs(os.path.dirname(os.path.join(self.repo, path)), exist_ok=True)
    self._put(uplift.SLOTS_INC, uplift.render_inc(self.old))
    decisions = ["# A comment that stays.", "PJRT_Error_Destroy\tpjrtkit\t"]
    decisions += [f"{s}\tdevice\tSomething::Else" for s in self.old.slots[1:]]
    decisions.append("PJRT_Gone_Slot\tunimplemented\tno longer in any header")
    self._put(uplift.DECISIONS, "\n".join(decisions) + "\n")
    self._put(uplift.DOCS, "# Slots\n\n" + docs_section.begin_marker("slot-decisions", "x") +
              "\nstale\n<!-- END GENERATED -->\n\nafter\n")

  def _put(self, path: str, text: str) -> None:
    with open(os.path.join(self.repo, path), "w", encoding="utf-8") as f:
      f.write(text)

  def _get(self, path: str) -> str:
    with open(os.path.join(self.repo, path), encoding="utf-8") as f:
      return f.read()

  def test_write_regenerates_the_three_files(self):
    self.assertEqual(len(uplift.check_files(self.new, self.repo)), 3)
    done = uplift.write_files(self.new, self.repo)
    self.assertEqual(done[:2], ["wrote tools/api_coverage/pjrt_api_slots.inc (138 slots)",
                                "wrote xla_plugin/c_api/slot_decisions.txt: 20 undecided added, "
                                "1 dropped"])
    self.assertEqual(done[-1], "wrote docs/reference/slots.md (slot-decisions)")
    inc = self._get(uplift.SLOTS_INC).splitlines()
    self.assertEqual(inc[0], "// GENERATED by tools/pjrt_headers/uplift.py from pjrt_c_api.h "
                             "(PJRT C API 0.117); do not edit.")
    self.assertEqual(inc[5], "// 138 slots.")
    self.assertEqual(inc[6], "PJRT_API_SLOT(PJRT_Error_Destroy)")
    self.assertEqual(inc[-1], "#undef PJRT_API_SLOT")
    self.assertEqual(len(inc), 6 + 138 + 1)
    lines = self._get(uplift.DECISIONS).splitlines()
    self.assertEqual(lines[:2], ["# A comment that stays.", "PJRT_Error_Destroy\tpjrtkit\t"])
    self.assertEqual([line.split("\t")[0] for line in lines[1:]], self.new.slots)
    undecided = [line for line in lines if "\tundecided\t" in line]
    self.assertEqual(undecided, [f"{s}\tundecided\t" for s in ADDED_SLOTS])
    self.assertEqual(lines[119], "PJRT_Client_CreateErrorBuffer\tundecided\t")
    self.assertNotIn("PJRT_Gone_Slot", self._get(uplift.DECISIONS))
    docs = self._get(uplift.DOCS)
    self.assertTrue(docs.endswith("<!-- END GENERATED -->\n\nafter\n"))
    table = docs_section.extract(docs, "slot-decisions").splitlines()
    self.assertEqual(table[0], "PJRT C API 0.117: 138 slots, decided in "
                               "`xla_plugin/c_api/slot_decisions.txt`.")
    self.assertEqual(table[4], "| 1 | `PJRT_Error_Destroy` | pjrtkit |  |")
    self.assertEqual(table[5], "| 2 | `PJRT_Error_Message` | device | Something::Else |")
    self.assertEqual(table[-1], "pjrtkit: 1, device: 117, unimplemented: 0, undecided: 20.")
    self.assertEqual(uplift.check_files(self.new, self.repo), [])
    self.assertEqual(uplift.write_files(self.new, self.repo), [])  # Nothing left to do.

  def test_check_names_each_stale_file(self):
    problems = uplift.check_files(self.new, self.repo)
    self.assertEqual(problems[0], "tools/api_coverage/pjrt_api_slots.inc does not list the 138 "
                                  "slots of PJRT C API 0.117")
    self.assertTrue(problems[1].startswith(
        "xla_plugin/c_api/slot_decisions.txt is out of date: 20 slot(s) missing "
        "(PJRT_Client_CreateErrorBuffer, "), problems[1])
    self.assertIn("1 not in the header (PJRT_Gone_Slot)", problems[1])
    self.assertEqual(problems[2], "docs/reference/slots.md: the slot-decisions table differs "
                                  "from xla_plugin/c_api/slot_decisions.txt")

  def test_a_bad_decision_is_refused(self):
    self._put(uplift.DECISIONS, "PJRT_Error_Destroy\tmaybe\t\n")
    with self.assertRaisesRegex(ValueError, "slot_decisions.txt:1: expected SLOT<TAB>DECISION"):
      uplift.write_files(self.new, self.repo)

  def test_main_check_exit_codes(self):
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
      self.assertEqual(uplift.main(["--check", "--old", os.path.dirname(_OLD),
                                    "--repo", self.repo]), 1)
    self.assertIn("uplift --check: run `python3 tools/pjrt_headers/uplift.py --write`",
                  stderr.getvalue())
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
      self.assertEqual(uplift.main(["--new", os.path.dirname(_NEW), "--old",
                                    os.path.dirname(_OLD), "--write", "--repo", self.repo]), 0)
    self.assertIn("Slots: 118 -> 138 (20 added, 0 removed)", stdout.getvalue())
    with contextlib.redirect_stdout(io.StringIO()):
      self.assertEqual(uplift.main(["--check", "--old", os.path.dirname(_NEW),
                                    "--repo", self.repo]), 0)

  def tearDown(self):
    shutil.rmtree(self.repo, ignore_errors=True)
    super().tearDown()


if __name__ == "__main__":
  if len(sys.argv) >= 3 and sys.argv[1].endswith(".h"):
    _OLD, _NEW = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
  unittest.main()
