"""The pjrtkit release version (kept equal to pyproject.toml's, which a test checks)."""

__version__ = "0.1.0"
