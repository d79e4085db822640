"""Drops the module-level sdy.mesh op of a Shardy-exported portable artifact (its mesh is also in
the module's mhlo.frontend_attributes xla.sdy.meshes) and writes it again at StableHLO 1.19.0."""
import sys
from jax._src.interpreters import mlir as jmlir
from jax._src.lib import _jax
from jax._src.lib.mlir import ir

source, target = sys.argv[1], sys.argv[2]
with jmlir.make_ir_context() as context:
    module = _jax.mlir.deserialize_portable_artifact(open(source, "rb").read())
    for op in list(module.body.operations):
        if op.operation.name == "sdy.mesh":
            op.operation.erase()
    bytecode = module.operation.get_asm(binary=True)
    open(target, "wb").write(_jax.mlir.serialize_portable_artifact(bytecode, "1.19.0", False))
