"""ragged_dot and ragged_dot_general (see api.py)."""
