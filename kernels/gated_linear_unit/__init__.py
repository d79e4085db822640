"""gated_linear_unit (see api.py)."""
