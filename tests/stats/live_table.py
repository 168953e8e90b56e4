"""A live table for the follow tests: a real ``xocdia-server`` process with its five devices on real ptys and a
dealer thread that plays rounds on them, settling each on faces drawn from a seeded generator (fair or biased)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.stats.settlement import draw_patterns, make_generator
from tests.gameserver.gs_ptys import PtyDevice
from tests.stats.stats_helpers import faces_of
from tests.support.gs_process import UNTAGGED_OK, ServerProcess, write_config


class Dealer:
    """Plays ``rounds`` rounds on the ptys, each settled on the next seeded pattern; :attr:`settled` counts the
    rounds whose result was sent. Stops early when :meth:`stop` is called."""

    def __init__(self, devices: dict[str, PtyDevice], patterns: list[int]) -> None:
        self.devices = devices
        self.patterns = patterns
        self.settled = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Dealer:
        for name in ("bowl", "shaker", "reader", "console"):
            device = self.devices[name]
            device.send("HELLO", (("id", f"{device.src}-0001"), ("proto", "1"), ("fw", "test")))
        self._thread.start()
        return self

    def _run(self) -> None:
        bowl, shaker, reader, console, lamp = (self.devices[n] for n in ("bowl", "shaker", "reader", "console", "lamp"))
        try:
            round_id = int(lamp.wait_lamp("OPEN", len(lamp.received)).get("round"))
            while self.settled < len(self.patterns) and not self._stop.is_set():
                pattern = self.patterns[self.settled]
                mark = len(lamp.received)
                console.send("TOKENS")
                bowl.send("ON")
                shaker.send("START")
                shaker.send("END")
                lamp.wait_lamp("CLOSE", mark, round_id)
                bowl.send("OFF", (("touch", "0"), ("token", "-")))
                reader.send("RESULT", (("faces", faces_of(pattern)), ("overlap", "0")))
                lamp.wait_lamp("OPEN", mark, round_id + 1, timeout=20)
                voided = any(f.type == "VOID" and f.get("round") == str(round_id) for f in lamp.received[mark:])
                if not voided:  # a round void on a slow machine (the shake after the close) plays its faces again
                    self.settled += 1
                round_id += 1
        except BaseException as exc:  # reported by the test through :attr:`error`
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout=timeout)


@contextmanager
def live_table(tmp_path: Path, rounds: int, p_red: float, seed: int) -> Iterator[tuple[ServerProcess, Dealer]]:
    """A started server and a started dealer playing ``rounds`` rounds at P(red) ``p_red`` per token (seeded);
    both stopped at exit."""
    patterns = [int(x) for x in draw_patterns(make_generator(seed), rounds, [p_red] * 4)]
    devices = {name: PtyDevice(name.upper()) for name in ("bowl", "shaker", "reader", "console", "lamp")}
    config = write_config(tmp_path / "c.yaml", UNTAGGED_OK, betting_s=0.3, round_gap_s=0.02, result_timeout_s=20)
    args = ["--config", str(config)]
    for name, device in devices.items():
        args += ["--device", f"{name}={device.path}"]
    server = ServerProcess(tmp_path / "ledger.db", args).start()
    dealer = Dealer(devices, patterns)
    try:
        dealer.start()
        yield server, dealer
    finally:
        dealer.stop()
        server.stop()
        for device in devices.values():
            device.close()
