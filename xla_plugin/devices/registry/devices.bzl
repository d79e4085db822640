"""pjrtkit's registered devices: one line per folder of xla_plugin/devices (tools/new_device.py
adds one). Each folder has a cc_library `:entry` whose `entry.h` declares `pjrtkit::NAME::Entry()`.
"""

DEVICES = [
    "xla_cpu",
    "xla_gpu",
    "sim",
]
