// abi_probe: checks a PJRT plugin's struct sizes against pjrtkit's headers.
//
//   abi_probe path/to/plugin.so
//
// It dlopens the plugin, reads its PJRT_Api version and struct_size, and calls every slot within
// its table (PJRT_Error_* excepted) in a forked child with a zero-filled Args buffer whose
// struct_size is 1, so no field is read. An entry point built on OpenXLA's wrapper answers
// "Unexpected <Name>_Args size: expected N, got 1", N being the size of the Args struct the
// plugin was built with. Each size learned, and PJRT_Api's own, must end right after one of the
// fields of the pinned header's struct (the plugin's struct is a prefix of ours); when the probe
// holds the header of the plugin's version (the pinned one, or 0.81), it must equal that
// header's NAME_STRUCT_SIZE exactly. The extension chain is checked the same way for the
// extension types whose struct the pinned header declares. It prints a report and exits 1 when
// any size mismatches (2 when the plugin cannot be loaded).

// C standard library / POSIX.
#include <dlfcn.h>

// C++ standard library.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "tools/api_coverage/abi_check.h"
#include "tools/api_coverage/args_size_probe.h"
#include "tools/pjrt_headers/header_layout.h"

namespace {

using api_coverage::AbiCheck;
using api_coverage::ArgsSizeProbe;
using api_coverage::NamedSize;
using api_coverage::SizeCheck;
using api_coverage::SlotAnswer;
using pjrt_headers::HeaderLayout;

// What the probe counted.
struct Tally {
  int probed = 0;         // Slots called.
  int skipped_error = 0;  // PJRT_Error_* within the table (not called).
  int null_slots = 0;     // NULL slots within the table.
  int beyond = 0;         // Slots of our header beyond the plugin's table.
  int learned = 0;        // Answers naming a size.
  int other_answers = 0;  // Errors naming no size.
  int no_error = 0;       // Slots that accepted the buffer.
  int crashed = 0;        // Children that died.
  int at_field = 0;       // Sizes ending after a field of our struct.
  int newer = 0;          // Sizes beyond our struct, from a newer plugin.
  int unchecked = 0;      // Sizes of structs our header lacks.
  int exact_equal = 0;    // Sizes equal to the same-version header's _STRUCT_SIZE.
  int exact_checked = 0;  // Sizes compared with it.
  int renamed = 0;        // Answers naming another struct than the slot's Args.
  int mismatches = 0;     // Checks that failed (slots, PJRT_Api, extensions).
};

// "a|b" would split a markdown cell.
std::string Cell(std::string text) {
  for (char& c : text) {
    if (c == '|') c = '/';
    if (c == '\n') c = ' ';
  }
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

// Counts `check` into `tally`.
void Count(const SizeCheck& check, Tally* tally) {
  tally->at_field += check.prefix == SizeCheck::Prefix::kAtField;
  tally->newer += check.prefix == SizeCheck::Prefix::kNewer;
  tally->unchecked += check.prefix == SizeCheck::Prefix::kUnknownStruct;
  tally->exact_checked +=
      check.exact == SizeCheck::Exact::kEqual || check.exact == SizeCheck::Exact::kDiffers;
  tally->exact_equal += check.exact == SizeCheck::Exact::kEqual;
  tally->mismatches += !check.ok();
}

// The note of a row whose answer named another struct.
std::string RenameNote(const SizeCheck& check) {
  if (check.named.empty()) return "";
  return "the plugin named " + check.named +
         (check.named_unknown ? " (in no header: checked as the slot's Args)" : "");
}

// Probes one slot and prints its row.
template <typename Args, typename Result>
void ProbeSlot(const PJRT_Api* api, const AbiCheck& checker, const char* name, size_t offset,
               Result (*fn)(Args*), int index, Tally* tally) {
  if (offset + sizeof(fn) > api->struct_size) {
    ++tally->beyond;
    return;
  }
  if (std::strncmp(name, "PJRT_Error_", 11) == 0) {
    ++tally->skipped_error;
    return;
  }
  if (fn == nullptr) {
    ++tally->null_slots;
    std::printf("| %d | %s | NULL | | | | |\n", index, name);
    return;
  }
  if constexpr (!std::is_void_v<Result>) {
    ++tally->probed;
    const SlotAnswer answer = ArgsSizeProbe(api).Call(fn);
    NamedSize named;
    if (answer.kind == SlotAnswer::Kind::kCrashed) {
      ++tally->crashed;
      std::printf("| %d | %s | crashed | | | | |\n", index, name);
    } else if (answer.kind == SlotAnswer::Kind::kNoError) {
      ++tally->no_error;
      std::printf("| %d | %s | accepted struct_size 1 | | | | |\n", index, name);
    } else if (!ArgsSizeProbe::ParseExpectedSize(answer.message, &named)) {
      ++tally->other_answers;
      std::printf("| %d | %s | no size | | | | %s |\n", index, name,
                  Cell("error " + std::to_string(answer.code) + ": " + answer.message).c_str());
    } else {
      ++tally->learned;
      const SizeCheck check = checker.CheckSlotArgs(name, named.name, named.size);
      Count(check, tally);
      tally->renamed += check.named_unknown || check.struct_name != std::string(name) + "_Args";
      std::printf("| %d | %s | %s | %zu | %s | %s | %s |\n", index, name,
                  check.struct_name.c_str(), named.size,
                  AbiCheck::PrefixText(check, named.size).c_str(),
                  AbiCheck::ExactText(check).c_str(), Cell(RenameNote(check)).c_str());
    }
  }
}

// Checks PJRT_Api's and PJRT_Api_Version's struct_size; prints their rows.
void CheckTable(const PJRT_Api* api, const AbiCheck& checker, Tally* tally) {
  std::printf("| struct | plugin's struct_size | pinned header | same-version header |\n");
  std::printf("| --- | --- | --- | --- |\n");
  const struct {
    const char* name;
    size_t size;
  } rows[] = {{"PJRT_Api", api->struct_size},
              {"PJRT_Api_Version", api->pjrt_api_version.struct_size}};
  for (const auto& row : rows) {
    const SizeCheck check = checker.CheckStruct(row.name, row.size);
    tally->mismatches += !check.ok();
    std::printf("| %s | %zu | %s | %s |\n", row.name, row.size,
                AbiCheck::PrefixText(check, row.size).c_str(), AbiCheck::ExactText(check).c_str());
  }
}

// Checks and prints the extension chain; returns the number of mismatches.
int CheckExtensions(const PJRT_Api* api, const AbiCheck& checker, const HeaderLayout& pinned) {
  std::printf("\n## Extensions\n\n");
  int count = 0, known = 0, at_field = 0, mismatches = 0;
  std::printf("| # | type | struct_size | struct (pinned header) | pinned header | "
              "same-version header |\n| --- | --- | --- | --- | --- | --- |\n");
  const PJRT_Extension_Base* ext = api->extension_start;
  for (; ext != nullptr && count < 64; ext = ext->next) {
    ++count;
    const int type = static_cast<int>(ext->type);
    const pjrt_headers::ExtensionType* info = pinned.FindExtension(type);
    const std::string type_name = info != nullptr ? info->name : "(unknown to the pinned header)";
    if (info == nullptr || info->struct_name == nullptr) {
      std::printf("| %d | %s (%d) | %zu | - | not checked | - |\n", count, type_name.c_str(), type,
                  ext->struct_size);
      continue;
    }
    ++known;
    const SizeCheck check = checker.CheckStruct(info->struct_name, ext->struct_size);
    at_field += check.prefix == SizeCheck::Prefix::kAtField;
    mismatches += !check.ok();
    std::printf("| %d | %s (%d) | %zu | %s | %s | %s |\n", count, type_name.c_str(), type,
                ext->struct_size, info->struct_name,
                AbiCheck::PrefixText(check, ext->struct_size).c_str(),
                AbiCheck::ExactText(check).c_str());
  }
  std::printf("\nExtensions: %d in the chain, %d of a type whose struct the pinned header "
              "declares, %d ending after one of its fields, %d mismatched.\n",
              count, known, at_field, mismatches);
  return mismatches;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s path/to/pjrt_plugin.so\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "abi_probe: cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(library, "GetPjrtApi"));
  const PJRT_Api* api = get_api != nullptr ? get_api() : nullptr;
  if (api == nullptr) {
    std::fprintf(stderr, "abi_probe: %s has no GetPjrtApi, or it returned NULL\n", argv[1]);
    return 2;
  }
  const HeaderLayout& pinned = pjrt_headers::PinnedHeaderLayout();
  const int major = api->pjrt_api_version.major_version;
  const int minor = api->pjrt_api_version.minor_version;
  const HeaderLayout* same_version = nullptr;
  for (const HeaderLayout* candidate : {&pinned, &pjrt_headers::HeaderLayout0_81()}) {
    if (candidate->major() == major && candidate->minor() == minor) same_version = candidate;
  }
  const AbiCheck checker(pinned, same_version, major == pinned.major() && minor > pinned.minor());

  std::printf("# ABI probe of %s\n\n", argv[1]);
  std::printf("Plugin PJRT C API %d.%d, PJRT_Api struct_size %zu. Pinned header %d.%d "
              "(PJRT_Api struct_size %zu); same-version header: %s.\n\n",
              major, minor, api->struct_size, pinned.major(), pinned.minor(),
              static_cast<size_t>(PJRT_Api_STRUCT_SIZE),
              same_version == nullptr
                  ? "none (sizes checked as prefixes only)"
                  : (std::to_string(same_version->major()) + "." +
                     std::to_string(same_version->minor()) + " (sizes checked exactly too)")
                        .c_str());
  if (major != pinned.major()) {
    std::printf("abi_probe: MISMATCH: the plugin's PJRT_API_MAJOR %d is not ours (%d)\n", major,
                pinned.major());
    return 1;
  }
  Tally tally;
  CheckTable(api, checker, &tally);

  std::printf("\n## Args sizes (each slot called with struct_size 1)\n\n");
  std::printf("| # | slot | struct | size | pinned header | same-version header | note |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  int index = 0;
#define PJRT_API_SLOT(name) \
  ProbeSlot(api, checker, #name, offsetof(PJRT_Api, name), api->name, ++index, &tally);
#include "tools/api_coverage/pjrt_api_slots.inc"

  std::printf("\nSlots: %d probed, %d PJRT_Error_* not called, %d NULL, %d beyond the plugin's "
              "table.\n",
              tally.probed, tally.skipped_error, tally.null_slots, tally.beyond);
  std::printf("Answers: %d sizes learned, %d errors without a size, %d accepted struct_size 1, "
              "%d crashed.\n",
              tally.learned, tally.other_answers, tally.no_error, tally.crashed);
  std::printf("Sizes: %d of %d end after a field of the pinned header's struct, %d beyond it "
              "(newer plugin), %d of structs it lacks; %d of %d equal the same-version "
              "_STRUCT_SIZE; %d answers name another struct than the slot's Args.\n",
              tally.at_field, tally.learned, tally.newer, tally.unchecked, tally.exact_equal,
              tally.exact_checked, tally.renamed);
  const int mismatches = tally.mismatches + CheckExtensions(api, checker, pinned);
  if (mismatches > 0) {
    std::printf("\nabi_probe: %d MISMATCH(ES)\n", mismatches);
    return 1;
  }
  std::printf("\nabi_probe: OK, no mismatch\n");
  return 0;
}
