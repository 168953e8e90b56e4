"""xocdia-hil harness: devices, benches, adapters, the independent oracle, statistics, reports and the CLI."""

from harness import moved as _moved

_moved.install()
