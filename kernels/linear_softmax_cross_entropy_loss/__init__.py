"""linear_softmax_cross_entropy_loss (see api.py)."""
