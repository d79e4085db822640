"""Runs JAX's own test files on pjrtkit and on jaxlib's cpu backend, side by side (see README.md)."""
