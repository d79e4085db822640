"""Test support for the Mosaic attention kernels (not part of the library: Bazel's
``//kernels:testing``, testonly; left out of wheels)."""
