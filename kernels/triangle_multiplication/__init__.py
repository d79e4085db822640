"""triangle_multiplication (see api.py)."""
