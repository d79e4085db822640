"""Tests of header_model.py on small header texts written for the test."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import unittest

from tools.pjrt_headers import header_model

_MAIN = textwrap.dedent("""\
    #define PJRT_API_MAJOR 0
    #define PJRT_API_MINOR 7  // A comment after the number.
    #define PJRT_STRUCT_SIZE(struct_type, last_field) 0
    #define PJRT_DEFINE_STRUCT_TRAITS(sname, last_field) enum { sname##_STRUCT_SIZE = 0 }
    #define _PJRT_API_STRUCT_FIELD(fn_type) fn_type* fn_type

    typedef enum {
      PJRT_Extension_Type_Gpu_Custom_Call = 0,
      PJRT_Extension_Type_Profiler,
      PJRT_Extension_Type_Fancy_Thing,  /* 2 */
    } PJRT_Extension_Type;

    typedef struct PJRT_Extension_Base {
      size_t struct_size;
      PJRT_Extension_Type type;
      struct PJRT_Extension_Base* next;
    } PJRT_Extension_Base;
    PJRT_DEFINE_STRUCT_TRAITS(PJRT_Extension_Base, next);

    typedef enum {
      PJRT_Flag_None = 0,
      PJRT_Flag_A = 1u << 0,
      PJRT_Flag_B = 1U << 3,
      PJRT_Flag_C,
      PJRT_Flag_AB = PJRT_Flag_A | PJRT_Flag_B,
      PJRT_Flag_Hex = 0x10,
    } PJRT_Flag;

    struct PJRT_NamedThing {
      size_t struct_size;
      const char* name;  // A comment; with a semicolon.
      union {
        const char* string_value;
        int64_t int64_value;
        bool bool_value;
      };
      /* A block
         comment. */
      void (*on_done)(PJRT_Error* error, void* user_arg);
      int64_t dims[4];
      PJRT_NO_DISCARD PJRT_Error* (*callback)(void*);
    };
    PJRT_DEFINE_STRUCT_TRAITS(PJRT_NamedThing, callback);

    typedef struct PJRT_Api {
      size_t struct_size;
      PJRT_Extension_Base* extension_start;
      _PJRT_API_STRUCT_FIELD(PJRT_First);
      PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(
          PJRT_Second_WithALongName);
    } PJRT_Api;

    enum {
      PJRT_Api_STRUCT_SIZE =
          PJRT_STRUCT_SIZE(PJRT_Api, PJRT_Second_WithALongName)
    };
    """)

_EXTENSION = textwrap.dedent("""\
    #include "xla/pjrt/c/pjrt_c_api.h"
    #include "xla/pjrt/c/pjrt_c_api_thing_event.h"
    #define PJRT_API_FANCY_THING_EXTENSION_VERSION 4

    typedef struct PJRT_Fancy_Thing_Extension {
      PJRT_Extension_Base base;
      int version;
    } PJRT_Fancy_Thing_Extension;

    typedef struct PJRT_Gpu_Custom_Call {
      PJRT_Extension_Base base;
      bool handles_traits;
    } PJRT_Gpu_Custom_Call;
    """)


def _write_set(root: str, nested: bool, extra: dict[str, str] | None = None) -> str:
  """Writes the test header set under `root`; returns the folder holding pjrt_c_api.h."""
  c_dir = os.path.join(root, "xla", "pjrt", "c") if nested else root
  os.makedirs(c_dir, exist_ok=True)
  files = {"pjrt_c_api.h": _MAIN, "pjrt_c_api_fancy_thing_extension.h": _EXTENSION,
           "pjrt_c_api_thing_event.h": "struct PJRT_ThingEvent { int state; };\n",
           "pjrt_c_api_helpers.h": "namespace pjrt { class Helper { int x; }; }\n",
           "not_a_pjrt_header.h": "struct Ignored { int x; };\n", **(extra or {})}
  for name, text in files.items():
    with open(os.path.join(c_dir, name), "w", encoding="utf-8") as f:
      f.write(text)
  return c_dir


class ParseTest(unittest.TestCase):

  def test_union_members_carry_their_union(self):
    structs = header_model.parse_structs(header_model.strip_comments(_MAIN), "pjrt_c_api.h")
    thing = structs["PJRT_NamedThing"]
    self.assertEqual(thing.field_names(), ["struct_size", "name", "string_value", "int64_value",
                                           "bool_value", "on_done", "dims", "callback"])
    self.assertEqual([f.union for f in thing.fields], [None, None, 0, 0, 0, None, None, None])
    self.assertEqual(thing.field("int64_value").declaration, "int64_t int64_value")
    self.assertIsNone(thing.field("missing"))

  def test_function_pointers_and_arrays_are_named_by_their_member(self):
    thing = header_model.parse_structs(header_model.strip_comments(_MAIN), "h")["PJRT_NamedThing"]
    self.assertEqual(thing.field("on_done").declaration,
                     "void (*on_done)(PJRT_Error* error, void* user_arg)")
    self.assertEqual(thing.field("dims").declaration, "int64_t dims[4]")
    # PJRT_NO_DISCARD is dropped from the declaration.
    self.assertEqual(thing.field("callback").declaration, "PJRT_Error* (*callback)(void*)")

  def test_enumerators_with_shifts_suffixes_and_references(self):
    enums = header_model.parse_enums(header_model.strip_comments(_MAIN), "pjrt_c_api.h")
    self.assertEqual(enums["PJRT_Flag"].values,
                     (("PJRT_Flag_None", 0), ("PJRT_Flag_A", 1), ("PJRT_Flag_B", 8),
                      ("PJRT_Flag_C", 9), ("PJRT_Flag_AB", 9), ("PJRT_Flag_Hex", 16)))
    self.assertEqual(enums["PJRT_Extension_Type"].values,
                     (("PJRT_Extension_Type_Gpu_Custom_Call", 0),
                      ("PJRT_Extension_Type_Profiler", 1),
                      ("PJRT_Extension_Type_Fancy_Thing", 2)))

  def test_unknown_enumerator_expression_fails_loudly(self):
    with self.assertRaisesRegex(ValueError, "cannot evaluate enumerator value"):
      header_model.parse_enums("typedef enum { A = sizeof(int) } E;", "h")

  def test_slots_across_lines(self):
    structs = header_model.parse_structs(header_model.strip_comments(_MAIN), "h")
    self.assertEqual(header_model.parse_slots(structs), ["PJRT_First", "PJRT_Second_WithALongName"])
    self.assertEqual(structs["PJRT_Api"].field("PJRT_Second_WithALongName").declaration,
                     "PJRT_Second_WithALongName* PJRT_Second_WithALongName")

  def test_struct_traits_of_both_forms(self):
    traits = header_model.parse_struct_traits(header_model.strip_comments(_MAIN))
    self.assertEqual(traits, {"PJRT_Extension_Base": "next", "PJRT_NamedThing": "callback",
                              "PJRT_Api": "PJRT_Second_WithALongName"})

  def test_named_unions_are_refused(self):
    with self.assertRaisesRegex(ValueError, "named unions are not supported"):
      header_model.parse_structs("struct S { union { int a; } u; };", "h")

  def test_no_api_struct_is_an_error(self):
    with self.assertRaisesRegex(ValueError, "no `struct PJRT_Api"):
      header_model.parse_slots({})


class LoadTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.root = tempfile.mkdtemp(prefix="header_model_test.")
    self.addCleanup(shutil.rmtree, self.root)

  def test_nested_set(self):
    _write_set(self.root, nested=True)
    model = header_model.load(self.root)
    self.assertEqual(model.version, (0, 7))
    self.assertEqual(model.version_string, "0.7")
    self.assertEqual(model.slots, ["PJRT_First", "PJRT_Second_WithALongName"])
    # The extension's include joins the set; C++ helpers beside it do not.
    self.assertEqual(model.headers, ["pjrt_c_api.h", "pjrt_c_api_fancy_thing_extension.h",
                                     "pjrt_c_api_thing_event.h"])
    self.assertEqual(model.structs["PJRT_ThingEvent"].field_names(), ["state"])
    self.assertNotIn("Helper", model.structs)
    self.assertEqual(model.extension_versions, {"PJRT_API_FANCY_THING_EXTENSION_VERSION": 4})
    self.assertEqual(model.structs["PJRT_Fancy_Thing_Extension"].header,
                     "pjrt_c_api_fancy_thing_extension.h")
    self.assertNotIn("Ignored", model.structs)
    self.assertEqual(model.include_root, self.root)
    self.assertEqual(model.include_lines(), [
        '#include "xla/pjrt/c/pjrt_c_api.h"',
        '#include "xla/pjrt/c/pjrt_c_api_fancy_thing_extension.h"',
        '#include "xla/pjrt/c/pjrt_c_api_thing_event.h"'])

  def test_the_c_folder_of_a_nested_set_is_the_same_set(self):
    c_dir = _write_set(self.root, nested=True)
    model = header_model.load(c_dir)
    self.assertEqual(model.include_root, self.root)
    self.assertEqual(model.include_prefix, "xla/pjrt/c/")
    self.assertEqual(model.c_dir, c_dir)

  def test_flat_set(self):
    _write_set(self.root, nested=False)
    model = header_model.load(self.root)
    self.assertEqual(model.include_root, self.root)
    self.assertEqual(model.include_lines()[:2], ['#include "pjrt_c_api.h"',
                                                 '#include "pjrt_c_api_fancy_thing_extension.h"'])

  def test_extension_structs_match_type_names(self):
    _write_set(self.root, nested=True)
    model = header_model.load(self.root)
    self.assertEqual(model.extension_structs(), {
        "PJRT_Extension_Type_Gpu_Custom_Call": "PJRT_Gpu_Custom_Call",
        "PJRT_Extension_Type_Fancy_Thing": "PJRT_Fancy_Thing_Extension",
    })

  def test_missing_header_is_an_error(self):
    with self.assertRaisesRegex(FileNotFoundError, "no pjrt_c_api.h"):
      header_model.load(self.root)

  def test_missing_version_is_an_error(self):
    _write_set(self.root, nested=False,
               extra={"pjrt_c_api.h": _MAIN.replace("#define PJRT_API_MINOR 7", "")})
    with self.assertRaisesRegex(ValueError, "defines no PJRT_API_MAJOR / PJRT_API_MINOR"):
      header_model.load(self.root)

  def test_args_struct_of_slot(self):
    self.assertEqual(header_model.args_struct_of_slot("PJRT_Client_Create"),
                     "PJRT_Client_Create_Args")


if __name__ == "__main__":
  unittest.main()
