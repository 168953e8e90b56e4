"""xocdia-hil harness: devices, benches, adapters, the independent oracle, statistics, reports and the CLI."""
