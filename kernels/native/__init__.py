"""The native kernel library (C++ XLA FFI handlers for pjrtkit's CPU device)."""
