"""A stand-in for a vendor's staging server, to try the lab kit end to end without one.

It starts the reference ``xocdia-server`` as a process of its own, configured as a vendor would run it: rounds open
on the server's own timer with its own timings, and it knows only its supervisor (no player: the lab's adapter
creates each scenario's players). Its five device lines are cross-wired serial cables (per line two pty pairs whose
masters this script joins, like two USB adapters and a null-modem cable). It writes ``staging.yaml`` into the lab's
folder, a bench that reaches the server by URL through ``lab_adapter:LabAdapter``, then serves until Ctrl-C::

    python examples/lab/staging.py LAB_DIR
    cd LAB_DIR && xocdia-hil certify --bench staging.yaml --report report

Needs ptys (Linux, macOS) and the package's ``[server]`` extra.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
import tty
from pathlib import Path

import yaml

DEVICES = ("bowl", "shaker", "reader", "lamp", "console")
TOKEN = "vendor-supervisor-token"
#: The vendor's own timings (seconds); the bench file repeats them, as a lab copies them from the vendor.
ENGINE = {"betting_s": 2.5, "round_gap_s": 0.5, "auto_open": True, "result_timeout_s": 5.0, "pause_timeout_s": 2.0}


def _pty() -> tuple[int, str]:
    """A raw pty pair: the master (non-blocking) and the slave's path; the slave stays open, so reopening it never
    reads EIO."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    os.set_blocking(master, False)
    return master, os.ttyname(slave)


def cables() -> tuple[dict[str, str], dict[str, str], dict[int, int]]:
    """One cable per device: the server's end, the bench's end, and which master relays to which."""
    server, bench, peer = {}, {}, {}
    for name in DEVICES:
        (a, server[name]), (b, bench[name]) = _pty(), _pty()
        peer |= {a: b, b: a}
    return server, bench, peer


def relay(peer: dict[int, int], proc: subprocess.Popen[str]) -> None:
    """Copy bytes between the joined masters until the server exits; bytes nobody reads are lost, as on a line."""
    while proc.poll() is None:
        for fd in select.select(list(peer), [], [], 0.05)[0]:
            try:
                data = os.read(fd, 4096)
                while data:
                    data = data[os.write(peer[fd], data) :]
            except OSError:
                pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lab", type=Path, help="the lab's folder (xocdia-hil init LAB_DIR), with lab_adapter.py")
    lab = parser.parse_args().lab
    server_ends, bench_ends, peer = cables()
    config = {"engine": ENGINE, "players": [], "supervisors": [{"id": "vendor-boss", "token": TOKEN}]}
    (lab / "vendor-server.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(lab / "vendor.db"), "--port", "0"]
    cmd += ["--config", str(lab / "vendor-server.yaml")]
    cmd += [arg for name, path in server_ends.items() for arg in ("--device", f"{name}={path}")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "listening on" not in line:
        proc.wait()
        return 1
    bench = {
        "name": "vendor-staging",
        "server": {
            "kind": "url",
            "url": line.rsplit(" ", 1)[1].strip(),
            "adapter": "lab_adapter:LabAdapter",
            "opens_rounds": "server",
            "options": {"supervisor_token": TOKEN},
        },
        "devices": {"transport": "url", "urls": bench_ends},
        "profile": "certification",
        "players": 0,
        "timing": {"betting_s": 2.5, "round_gap_s": 0.5, "result_timeout_s": 5.0, "step_timeout_s": 30.0},
        "faults_allowed": False,
    }
    (lab / "staging.yaml").write_text(yaml.safe_dump(bench, sort_keys=False), encoding="utf-8")
    print(f"{line.strip()}; bench: {lab / 'staging.yaml'} (Ctrl-C stops)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # kill PID stops the server too
    try:
        relay(peer, proc)
    except KeyboardInterrupt:
        pass
    finally:
        proc.terminate()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
