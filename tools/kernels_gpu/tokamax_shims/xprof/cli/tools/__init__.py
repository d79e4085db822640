"""Stand-in package (see xprof/__init__.py)."""
