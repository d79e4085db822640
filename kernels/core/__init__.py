"""The kernel framework: `Op`, implementation choice, markers, autotuning, export checks."""
