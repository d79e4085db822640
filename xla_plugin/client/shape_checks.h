// The checks of an array's element type and dimensions as a caller gives them, one wording each,
// for every layer that reads them: the C-API layer on the PJRT arguments, a device on what its
// C++ callers pass (the wrapper in plugin_wrapper/, a team's own Client).
//
// Every error starts with `fn` (the entry point or method, "PJRT_Client_BufferFromHostBuffer") and
// names the parameter (`what`, "args->dims").
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_SHAPE_CHECKS_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_SHAPE_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// INVALID_ARGUMENT "<fn>: <what>[<i>] is <d>; dimensions must be >= 0" for the first negative
// one of the `num_dims` dimensions at `dims` (which must not be null when num_dims > 0).
Status CheckDimensions(const std::string& fn, const std::string& what, const int64_t* dims,
                       size_t num_dims);

// CheckDimensions over `dims`.
Status CheckDimensions(const std::string& fn, const std::string& what,
                       const std::vector<int64_t>& dims);

// The element type and dimensions of an array a caller asks for: INVALID_ARGUMENT (starting with
// `fn`) for an element type outside ElementType ("<fn>: invalid element type 99"), a negative
// dimension (CheckDimensions, parameter "dims"), or an array of more than 2^63 bytes ("<fn>: the
// dimensions [2,3] make an array of more than 2^63 bytes").
Status CheckShape(const std::string& fn, ElementType type, const std::vector<int64_t>& dims);

// "[2,3]" for dims {2, 3}: dimensions as the errors above write them.
std::string DimensionsText(const std::vector<int64_t>& dims);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_SHAPE_CHECKS_H_
