"""placeholder"""
from pjrtkit.kernels.dot_product_attention.xla import XlaAttention as _X
class MosaicAttention(_X):
  implementation = "mosaic"
  def unsupported_reason(self, spec, device): return "todo"
