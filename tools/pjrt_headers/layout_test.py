"""Tests of layout.py: a small header set compiled by the system compiler (x86-64 / AArch64
LP64 layouts)."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import unittest

from tools.pjrt_headers import header_model
from tools.pjrt_headers import layout

_HEADER = textwrap.dedent("""\
    #include <stdbool.h>
    #include <stddef.h>
    #include <stdint.h>
    #define PJRT_API_MAJOR 0
    #define PJRT_API_MINOR 3
    #define _PJRT_API_STRUCT_FIELD(fn_type) fn_type* fn_type
    #ifdef __cplusplus
    extern "C" {  // As in OpenXLA's headers (C++ accepts a slot named after its type here).
    #endif
    typedef struct PJRT_Error PJRT_Error;
    typedef struct PJRT_Value {
      size_t struct_size;
      const char* name;
      int type;
      union {
        const char* string_value;
        int64_t int64_value;
        bool bool_value;
      };
      void (*on_done)(PJRT_Error* error, void* user_arg);
      int64_t dims[4];
      bool last;
    } PJRT_Value;
    typedef PJRT_Error* PJRT_Do(void* args);
    typedef struct PJRT_Api {
      size_t struct_size;
      _PJRT_API_STRUCT_FIELD(PJRT_Do);
    } PJRT_Api;
    #ifdef __cplusplus
    }
    #endif
    """)


class LayoutTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = tempfile.mkdtemp(prefix="layout_test.")
    cls.addClassCleanup(shutil.rmtree, root)
    with open(os.path.join(root, "pjrt_c_api.h"), "w", encoding="utf-8") as f:
      f.write(_HEADER)
    cls.model = header_model.load(root)
    cls.layouts = layout.compute(cls.model)

  def test_sizes_and_offsets_from_the_compiler(self):
    value = self.layouts["PJRT_Value"]
    self.assertEqual(value.size, 80)
    self.assertEqual({name: (f.offset, f.size) for name, f in value.fields.items()}, {
        "struct_size": (0, 8), "name": (8, 8), "type": (16, 4), "string_value": (24, 8),
        "int64_value": (24, 8), "bool_value": (24, 1), "on_done": (32, 8), "dims": (40, 32),
        "last": (72, 1)})
    self.assertEqual(self.layouts["PJRT_Api"].size, 16)
    self.assertEqual(self.layouts["PJRT_Api"].fields["PJRT_Do"].offset, 8)

  def test_the_union_as_a_whole(self):
    self.assertEqual(self.layouts["PJRT_Value"].unions, (layout.FieldLayout(24, 8),))

  def test_field_ends_are_every_truncation_point(self):
    self.assertEqual(self.layouts["PJRT_Value"].field_ends(), [8, 16, 20, 25, 32, 40, 72, 73])

  def test_program_text_includes_the_set_and_measures_every_field(self):
    text = layout.program_text(self.model)
    self.assertIn('#include "pjrt_c_api.h"', text)
    self.assertIn("  PJRTKIT_FIELD(PJRT_Value, int64_value);", text)
    self.assertIn('  std::printf("S %s %zu\\n", "PJRT_Api", sizeof(PJRT_Api));', text)

  def test_a_compile_error_names_the_command(self):
    with self.assertRaisesRegex(layout.LayoutError, "-std=c\\+\\+17 -I"):
      layout.compute(self.model, compiler="c++ -DPJRT_Value=1")

  def test_unexpected_output_is_refused(self):
    with self.assertRaisesRegex(layout.LayoutError, "unexpected line"):
      layout.parse_output("S PJRT_Api 16\nhello\n", self.model)


if __name__ == "__main__":
  unittest.main()
