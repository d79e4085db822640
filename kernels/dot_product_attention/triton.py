"""placeholder"""
from pjrtkit.kernels.dot_product_attention.xla import XlaAttention as _X
class TritonAttention(_X):
  implementation = "triton"
  def unsupported_reason(self, spec, device): return "todo"
