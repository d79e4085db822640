// Our own declarations of the few MLIR / StableHLO C API functions StablehloLibrary calls, written
// from the public C API headers (mlir-c/IR.h, mlir-c/Diagnostics.h, mlir-c/BuiltinAttributes.h,
// stablehlo/integrations/c/StablehloDialectApi.h) so that no MLIR header is needed to build. Each
// handle is a struct of one pointer, as in the C API, passed and returned by value.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_MLIR_C_API_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_MLIR_C_API_H_

#include <cstddef>
#include <cstdint>

namespace pjrtkit {
namespace stablehlo {
namespace mlir_c {

struct MlirContext { void* ptr; };
struct MlirDialectRegistry { void* ptr; };
struct MlirDialectHandle { const void* ptr; };
struct MlirModule { const void* ptr; };
struct MlirOperation { void* ptr; };
struct MlirOpPrintingFlags { void* ptr; };
struct MlirType { const void* ptr; };
struct MlirAttribute { const void* ptr; };
struct MlirLocation { const void* ptr; };
struct MlirDiagnostic { void* ptr; };
struct MlirStringRef { const char* data; size_t length; };
struct MlirLogicalResult { int8_t value; };  // 1: success.

// Receives printed text in pieces.
using MlirStringCallback = void (*)(MlirStringRef text, void* user_data);
// Receives each diagnostic; returning success marks it handled.
using MlirDiagnosticHandler = MlirLogicalResult (*)(MlirDiagnostic diagnostic, void* user_data);
// mlirDiagnosticGetSeverity's values.
enum MlirDiagnosticSeverity : int { kError = 0, kWarning = 1, kNote = 2, kRemark = 3 };

// X(return type, name, parameter list): every function StablehloLibrary resolves.
#define PJRTKIT_MLIR_C_FUNCTIONS(X)                                                            \
  X(MlirDialectRegistry, mlirDialectRegistryCreate, ())                                        \
  X(void, mlirDialectRegistryDestroy, (MlirDialectRegistry registry))                          \
  X(void, mlirRegisterAllDialects, (MlirDialectRegistry registry))                             \
  X(MlirDialectHandle, mlirGetDialectHandle__stablehlo__, ())                                  \
  X(void, mlirDialectHandleInsertDialect, (MlirDialectHandle handle,                           \
                                           MlirDialectRegistry registry))                      \
  X(MlirContext, mlirContextCreateWithRegistry, (MlirDialectRegistry registry, bool threads))  \
  X(void, mlirContextDestroy, (MlirContext context))                                           \
  X(void, mlirContextSetAllowUnregisteredDialects, (MlirContext context, bool allow))          \
  X(uint64_t, mlirContextAttachDiagnosticHandler,                                              \
    (MlirContext context, MlirDiagnosticHandler handler, void* user_data,                      \
     void (*delete_user_data)(void*)))                                                         \
  X(void, mlirDiagnosticPrint, (MlirDiagnostic diagnostic, MlirStringCallback callback,        \
                                void* user_data))                                              \
  X(MlirLocation, mlirDiagnosticGetLocation, (MlirDiagnostic diagnostic))                      \
  X(MlirDiagnosticSeverity, mlirDiagnosticGetSeverity, (MlirDiagnostic diagnostic))            \
  X(void, mlirLocationPrint, (MlirLocation location, MlirStringCallback callback,              \
                              void* user_data))                                                \
  X(int, stablehloGetApiVersion, ())                                                           \
  X(void, stablehloGetCurrentVersion, (MlirStringCallback callback, void* user_data))          \
  X(void, stablehloGetMinimumVersion, (MlirStringCallback callback, void* user_data))          \
  X(MlirModule, stablehloDeserializePortableArtifactNoError, (MlirStringRef artifact,          \
                                                              MlirContext context))            \
  /* See StablehloLibrary::Interpret for this build's 5-parameter form. */                     \
  X(MlirAttribute, stablehloEvalModule, (MlirModule module, int num_args,                      \
                                         const MlirAttribute* args,                            \
                                         const char* probe_instrumentation_dir,                \
                                         int* error_code))                                     \
  X(MlirModule, mlirModuleCreateParse, (MlirContext context, MlirStringRef text))              \
  X(void, mlirModuleDestroy, (MlirModule module))                                              \
  X(MlirOperation, mlirModuleGetOperation, (MlirModule module))                                \
  X(MlirOpPrintingFlags, mlirOpPrintingFlagsCreate, ())                                        \
  X(void, mlirOpPrintingFlagsDestroy, (MlirOpPrintingFlags flags))                             \
  X(void, mlirOpPrintingFlagsPrintGenericOpForm, (MlirOpPrintingFlags flags))                  \
  X(void, mlirOpPrintingFlagsEnableDebugInfo, (MlirOpPrintingFlags flags, bool enable,         \
                                               bool pretty_form))                              \
  X(void, mlirOpPrintingFlagsAssumeVerified, (MlirOpPrintingFlags flags))                      \
  X(void, mlirOperationPrintWithFlags, (MlirOperation op, MlirOpPrintingFlags flags,           \
                                        MlirStringCallback callback, void* user_data))         \
  X(MlirType, mlirTypeParseGet, (MlirContext context, MlirStringRef type))                     \
  X(void, mlirTypePrint, (MlirType type, MlirStringCallback callback, void* user_data))        \
  X(MlirAttribute, mlirDenseElementsAttrRawBufferGet, (MlirType shaped_type, size_t size,      \
                                                       const void* data))                      \
  X(bool, mlirAttributeIsADenseElements, (MlirAttribute attribute))                            \
  X(MlirType, mlirAttributeGetType, (MlirAttribute attribute))                                 \
  X(intptr_t, mlirArrayAttrGetNumElements, (MlirAttribute attribute))                          \
  X(MlirAttribute, mlirArrayAttrGetElement, (MlirAttribute attribute, intptr_t index))         \
  X(int64_t, mlirElementsAttrGetNumElements, (MlirAttribute attribute))                        \
  X(bool, mlirDenseElementsAttrIsSplat, (MlirAttribute attribute))                             \
  X(const void*, mlirDenseElementsAttrGetRawData, (MlirAttribute attribute))

// The resolved functions, one pointer each.
struct Functions {
#define PJRTKIT_MLIR_C_DECLARE(ret, name, params) ret(*name) params = nullptr;
  PJRTKIT_MLIR_C_FUNCTIONS(PJRTKIT_MLIR_C_DECLARE)
#undef PJRTKIT_MLIR_C_DECLARE
};

}  // namespace mlir_c
}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_MLIR_C_API_H_
