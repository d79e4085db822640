"""layer_norm: layer normalisation and RMS normalisation over one axis."""
