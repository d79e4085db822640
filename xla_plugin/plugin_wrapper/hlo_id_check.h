// HloIdCheck: refuses HLO modules on which XLA would allocate in proportion to an instruction id.
//
// XLA (the xla-cpu-pjrt release in the lockfile) builds each computation of an HloModuleProto into
// a vector indexed by the low 32 bits of its instructions' ids, so one instruction numbered
// 0x20000001 makes it allocate 4 GiB before it checks anything else (found by
// //tests/fuzz:program_fuzzer). pjrtkit forwards "hlo" and "hlo_with_config" programs to the
// inner plugin as they are; this check reads the instruction ids first (with ProtoReader, no
// libprotobuf) and refuses modules whose id tables would be far larger than the module, and
// bytes it cannot read as a module (which XLA would refuse too, or read past this check).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_ID_CHECK_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_ID_CHECK_H_

#include <cstdint>
#include <string_view>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

class HloIdCheck {
 public:
  // Id-table entries (the sum over computations of their largest instruction id's low 32 bits,
  // plus one) always allowed: 2^26, 512 MiB of table.
  static constexpr uint64_t kMinAllowedEntries = uint64_t{1} << 26;
  // Beyond that, entries allowed per instruction of the module, or one per computation where
  // there are more computations: ids numbered densely across a whole module (as XlaBuilder
  // numbers them) give each computation a table up to the module's length, so a module of N
  // instructions in C computations needs up to C x N entries.
  static constexpr uint64_t kEntriesPerInstruction = 1024;

  // OK unless `program` ("hlo": an HloModuleProto; "hlo_with_config": an
  // HloModuleProtoWithConfig, its hlo_module fields merged) is a module whose id tables need
  // more than max(kMinAllowedEntries, N x max(kEntriesPerInstruction, C)) entries, or bytes
  // that are not a well-formed module (this reader's view: no groups); both INVALID_ARGUMENT
  // naming `what` and "program" (the first also the computation with the largest id and the
  // limit). Other formats pass: the inner plugin reports on those.
  static Status Check(const Program& program, const char* what);

  // The same for the bytes of an HloModuleProto.
  static Status CheckModule(std::string_view module, const char* what);
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_ID_CHECK_H_
