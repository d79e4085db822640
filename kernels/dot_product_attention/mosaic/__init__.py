"""dot_product_attention's "mosaic" implementation: Mosaic GPU kernels (Pallas, Hopper wgmma).

* ``attention``: `MosaicAttention` (the `Op`), its config, the single-warpgroup forward and
  backward (what runs under `pallas_interpret`) and the calls into the compiled kernels;
* ``fwd``: the warp-specialised forward (two compute warpgroups, one TMA producer), with
  ``work`` (how tiles are dealt to persistent programs, the split tail and its merge) and
  ``launch`` (the launch policy: programs, split tail, tile lists);
* ``bwd``: the fused warp-specialised backward, its static shape in ``bwd_geometry``;
* ``layouts``: head dims padded to the kernels' and short grouped calls folded into query rows;
* ``testing/``: test support only (``protocol_replay``: the barrier-protocol replay of the
  ``*_protocol_test.py`` files), not part of the library.
"""

from __future__ import annotations

from pjrtkit.kernels.dot_product_attention.mosaic.attention import (MosaicAttention,
                                                                    MosaicAttentionConfig)

__all__ = ["MosaicAttention", "MosaicAttentionConfig"]
