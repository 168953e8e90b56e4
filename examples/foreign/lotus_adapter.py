"""The lab's adapter for Lotus Tables' server (``lotus_server.py``): :class:`LotusAdapter`.

Written from the vendor's README (its API, pick names, error codes and event names) and docs/adapters.md. Two ways
to reach the server:

- ``server.kind: command`` (the bench ``lotus.yaml``): the adapter starts ``lotus_server.py`` for each scenario with
  the bench's timings and table configuration, a fresh SQLite ledger in the scenario's work folder, and the address
  of each device line the bench listens on (the server dials them); it can kill and restart it (``Restartable``);
- ``server.kind: url``: it attaches to a running server (``url``, ``supervisor_key`` options), creates each
  scenario's players under fresh names and reads only the events logged after its start.

Money: the kit's minor units are the vendor's cents, one for one. Rounds: the server opens them on its own timer
(``server.opens_rounds: server``); ``supervise("open")`` asks it to open one when it runs with ``--no-auto-open``.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.lab import (
    AdapterError,
    BetRecordRow,
    BetReply,
    GameServerAdapter,
    PlayerSpec,
    RoundEvent,
    RoundEventKind,
    ServerSetup,
)

SERVER = Path(__file__).resolve().with_name("lotus_server.py")

#: The kit's bet types -> the vendor's picks.
PICKS = {
    "four_red": "RED4",
    "three_red": "RED3",
    "two_red": "RED2",
    "one_red": "RED1",
    "four_white": "WHITE4",
    "four_of_a_kind": "QUAD",
    "odd": "ODD",
    "even": "EVEN",
    "big": "BIG",
    "small": "SMALL",
}
BET_TYPES = {v: k for k, v in PICKS.items()}

#: The vendor's error codes -> the kit's refusal codes (harness/cert/steps/bets.py, REFUSAL_CLAUSES).
CODES = {
    "L-CLOSED": "betting_closed",
    "L-HOLD": "round_paused",
    "L-FUNDS": "insufficient_balance",
    "L-CHIP": "stake_not_chip_multiple",
    "L-MIN": "stake_below_minimum",
    "L-MAX": "stake_above_maximum",
    "L-TYPE": "unknown_bet_type",
    "L-DUPKEY": "idempotency_conflict",
    "L-WRONGROUND": "wrong_round",
    "L-BADREQ": "bad_request",
    "L-KEY": "unauthorized",
    "L-STATE": "invalid_state",
    "L-NOPLAYER": "unknown_player",
}

#: The vendor's event types -> round event kinds. ``round.settled`` is a settlement only with status ``settled``
#: (after a void or a cancellation it carries the refunds); ``round.result`` and ``round.overlap`` are not round
#: events.
KINDS = {
    "round.opened": RoundEventKind.OPENED,
    "round.closed": RoundEventKind.CLOSED,
    "round.reshake": RoundEventKind.RESHAKE,
    "round.paused": RoundEventKind.PAUSED,
    "round.resumed": RoundEventKind.RESUMED,
    "round.voided": RoundEventKind.VOID,
    "round.cancelled": RoundEventKind.CANCELLED,
    "round.settled": RoundEventKind.SETTLED,
}


def _hostport(url: str, line: str) -> str:
    """``HOST:PORT`` of a ``socket://HOST:PORT`` line end. Raises AdapterError ``bad_setup`` for another form."""
    parts = urlsplit(url)
    if parts.scheme != "socket" or not parts.hostname or not parts.port:
        raise AdapterError("bad_setup", f"line {line}: the Lotus server dials socket://HOST:PORT; got {url!r}")
    return f"{parts.hostname}:{parts.port}"


class LotusAdapter(GameServerAdapter):
    """Lotus Tables' server through its HTTP JSON API; started per scenario (``command``) or attached (``url``)."""

    clock_is_sim_time = False

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self.url = str(self.options.get("url") or "")
        self.key = str(self.options.get("supervisor_key") or "lotus-supervisor")
        self.extra = [str(a) for a in self.options.get("server_args", [])]
        self.proc: subprocess.Popen[str] | None = None
        self.argv: list[str] = []
        self.host, self.port = "127.0.0.1", 0
        self.names: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self.connected: set[str] = set()
        self.events: list[RoundEvent] = []
        self.after = 0
        self.noise_base = 0
        self._stderr: list[str] = []

    # ------------------------------------------------------------------ HTTP
    def _call(self, method: str, path: str, key: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            headers = {"X-Lotus-Key": key, "Content-Type": "application/json"}
            conn.request(method, path, None if body is None else json.dumps(body), headers)
            resp = conn.getresponse()
            data = json.loads(resp.read() or b"{}")
            return resp.status, data if isinstance(data, dict) else {}
        except (OSError, ValueError) as exc:
            raise AdapterError("unreachable", f"{method} {path}: {exc}") from None
        finally:
            conn.close()

    def _ok(self, reply: tuple[int, dict[str, Any]], what: str) -> dict[str, Any]:
        status, data = reply
        if status >= 300:
            code = str(data.get("err", "error"))
            raise AdapterError(CODES.get(code, code), f"{what}: {data.get('msg', status)}")
        return data

    # ------------------------------------------------------------------ the server process
    def _command(self, setup: ServerSetup) -> list[str]:
        table = setup.table
        if table.chip_unit is None or table.chip_unit % 50:
            raise AdapterError("bad_setup", "table.chip_unit: the Lotus server takes a multiple of 50 cents")
        if table.reshake_count != "since_open":
            raise AdapterError("bad_setup", "table.reshake_count: the Lotus server counts re-shakes since_open only")
        if table.shakes_during_pause != "count":
            raise AdapterError("bad_setup", "table.shakes_during_pause: the Lotus server supports only count")
        if table.device_times != "ignored":
            raise AdapterError(
                "bad_setup", "table.device_times: the Lotus server judges every report on arrival (ignored only)"
            )
        for name in ("controller", "camera"):
            if name not in setup.devices:
                raise AdapterError("bad_setup", f"the bench has no {name} line (devices.dialect must be lotus)")
        result_s = 10.0**6 if setup.result_timeout_s is None else setup.result_timeout_s
        argv = [sys.executable, str(SERVER), "--port", "0", "--db", str(setup.workdir / "lotus.db")]
        argv += ["--controller", _hostport(setup.devices["controller"], "controller")]
        argv += ["--camera", _hostport(setup.devices["camera"], "camera")]
        argv += ["--supervisor-key", self.key, "--betting-s", str(setup.betting_s), "--gap-s", str(setup.round_gap_s)]
        argv += ["--result-timeout-s", str(result_s), "--pause-timeout-s", str(setup.pause_timeout_s)]
        argv += ["--reshake-cap", str(setup.reshake_cap), "--chip-cents", str(table.chip_unit)]
        argv += ["--min-cents", str(table.min_stake), "--max-cents", str(table.max_stake)]
        line = setup.lines.get("controller")
        if line is not None and line.dialect.name == "lotus-bin":
            argv += ["--controller-protocol", "bin"]
        if not setup.auto_open:
            argv.append("--no-auto-open")
        return argv + self.extra

    def _spawn(self) -> None:
        proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline() if proc.stdout else ""
        if "listening on http://" not in line:
            proc.kill()
            _out, err = proc.communicate(timeout=10)
            raise AdapterError("start_failed", f"lotus_server.py: {(err or line).strip()[-400:]}")
        self.proc = proc
        parts = urlsplit(line.rsplit(" ", 1)[1].strip())
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        threading.Thread(target=self._drain, args=(proc,), daemon=True).start()

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        if proc.stderr is not None:
            for line in proc.stderr:
                self._stderr = [*self._stderr[-50:], line]

    # ------------------------------------------------------------------ the interface
    def start(self, setup: ServerSetup) -> None:
        if self.url:
            parts = urlsplit(self.url)
            self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        else:
            self.argv = self._command(setup)
            self._spawn()
        self._new_events()  # a server that was already running: this scenario reads what follows
        self.events = []
        self.noise_base = 0

    def provision_players(self, players: tuple[PlayerSpec, ...]) -> None:
        suffix = secrets.token_hex(3)
        self.names = {p.player_id: f"{p.player_id}-{suffix}" for p in players}
        self.keys = {p.player_id: secrets.token_urlsafe(16) for p in players}
        body = {
            "players": [
                {"name": self.names[p.player_id], "key": self.keys[p.player_id], "balance_cents": p.balance}
                for p in players
            ]
        }
        if players:
            self._ok(self._call("POST", "/api/admin/players", self.key, body), "create players")

    def stop(self) -> None:
        self.connected.clear()
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    # Restartable
    @property
    def can_restart(self) -> bool:
        """True when this adapter started the server (not attached by URL)."""
        return not self.url

    @property
    def server_up(self) -> bool:
        """The server process runs (attached by URL: always)."""
        return bool(self.url) or (self.proc is not None and self.proc.poll() is None)

    def kill_server(self) -> None:
        """SIGKILL the server it started (nothing when attached by URL); the players' sessions are gone."""
        if self.url or self.proc is None:
            return
        self.connected.clear()
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def restart_server(self) -> None:
        """Start the killed server again on the same ledger and device lines; nothing while it runs."""
        if self.url or self.server_up or not self.argv:
            return
        self._spawn()

    def serial_port(self, device: str) -> None:
        """Always None (``Faultable``): the server dials its own ends of the lines; serial faults go on the device
        ends, which the rig wraps."""
        return None

    def connect(self, player_id: str) -> None:
        if not self.server_up:
            raise AdapterError("unreachable", "the server is down")
        self.connected.add(player_id)

    def disconnect(self, player_id: str) -> None:
        self.connected.discard(player_id)

    def _bet(self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str | None) -> BetReply:
        if player_id not in self.connected:
            raise AdapterError("not_connected", f"player {player_id!r} is not connected")
        body: dict[str, Any] = {"ref": client_bet_id, "pick": PICKS.get(bet_type, bet_type), "cents": stake}
        if round_id is not None:
            body["round"] = int(round_id) if round_id.isdigit() else round_id
        status, data = self._call("POST", "/api/bets", self.keys.get(player_id, ""), body)
        if status in (200, 201):
            t = data["ticket"]
            return BetReply(
                player_id,
                client_bet_id,
                bet_type,
                stake,
                accepted=True,
                bet_id=str(t["id"]),
                round_id=str(t["round"]),
                balance_before=int(t["balance_before"]),
                balance_after=int(t["balance_before"]) - int(t["cents"]),
            )
        code = str(data.get("err", "error"))
        return BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, code=CODES.get(code, code))

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        if lose_reply:  # the request leaves, the connection drops before the answer
            if player_id not in self.connected:
                raise AdapterError("not_connected", f"player {player_id!r} is not connected")
            body = {"ref": client_bet_id, "pick": PICKS.get(bet_type, bet_type), "cents": stake}
            conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
            try:
                headers = {"X-Lotus-Key": self.keys.get(player_id, ""), "Content-Type": "application/json"}
                conn.request("POST", "/api/bets", json.dumps(body), headers)
            except OSError as exc:
                raise AdapterError("unreachable", f"POST /api/bets: {exc}") from None
            finally:
                conn.close()
            self.disconnect(player_id)
            return BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, confirmed=False)
        return self._bet(player_id, client_bet_id, bet_type, stake, None)

    def place_bet_for_round(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str
    ) -> BetReply:
        return self._bet(player_id, client_bet_id, bet_type, stake, round_id)

    def supervise(self, action: str, reason: str = "") -> None:
        self._ok(self._call("POST", f"/api/admin/round/{action}", self.key), f"supervisor {action}")

    def _new_events(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        while True:
            page = self._ok(self._call("GET", f"/api/feed?since={self.after}&wait=0", self.key), "feed")["events"]
            rows += page
            if page:
                self.after = int(page[-1]["n"])
            if len(page) < 500:
                return rows

    def round_events(self) -> list[RoundEvent]:
        if self.server_up:
            for raw in self._new_events():
                kind = KINDS.get(str(raw["type"]))
                if kind is None or raw.get("round") is None:
                    continue
                if kind is RoundEventKind.SETTLED and raw.get("status") != "settled":
                    continue
                self.events.append(
                    RoundEvent(
                        str(raw["round"]),
                        kind,
                        float(raw["t"]),
                        str(raw.get("clause", "")),
                        str(raw.get("faces", "")),
                        str(raw.get("reason", "")),
                        raw,
                    )
                )
        return list(self.events)

    def round_events_since(self, n: int) -> list[RoundEvent]:
        self.round_events()
        return self.events[n:]

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        path = f"/api/admin/players/{self.names.get(player_id, player_id)}/bets"
        rows = self._ok(self._call("GET", path, self.key), f"bet record of {player_id}")["bets"]
        return [
            BetRecordRow(
                str(r["id"]),
                str(r["round"]),
                player_id,
                BET_TYPES.get(str(r["pick"]), str(r["pick"])),
                int(r["cents"]),
                str(r["result"]),
                int(r["returned"]),
                str(r["round_status"]),
                str(r["faces"] or ""),
                int(r["balance_before"]),
                int(r["balance_after"]),
                str(r["ref"]),
                None if r["reds"] is None else int(r["reds"]),
            )
            for r in rows
        ]

    def balance(self, player_id: str) -> int:
        path = f"/api/admin/players/{self.names.get(player_id, player_id)}/balance"
        return int(self._ok(self._call("GET", path, self.key), f"balance of {player_id}")["balance_cents"])

    # NoiseReporting
    def ignored_device_frames(self) -> int:
        """Device lines and reports the server refused or ignored since it started."""
        health = self._ok(self._call("GET", "/api/health", self.key), "health")
        return sum(int(v) for v in health["ignored_reports"].values())

    def event_log_size(self) -> int:
        """Entries in the server's event log."""
        return int(self._ok(self._call("GET", "/api/health", self.key), "health")["events"])

    def evidence(self) -> dict[str, str]:
        return {"lotus-server stderr": "".join(self._stderr)} if self._stderr else {}
