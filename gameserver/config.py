"""The server's configuration file (YAML), validated with errors that name the field and what is allowed.

```yaml
engine:            # every key optional; see EngineConfig and docs/server.md
  betting_s: 15
  round_gap_s: 3
  auto_open: true
  reshake_cap: 3
  pause_timeout_s: 60
  result_timeout_s: 30
  chip_unit: 100
  min_stake: 100
  max_stake: 1000000
players:           # wallets opened (once) with this balance; the token authenticates the player
  - {id: alice, token: alice-secret, balance: 100000}
supervisors:
  - {id: pit-boss, token: boss-secret}
devices:           # NAME: pyserial URL, or {url, dialect, roles, options, untagged_reports}
                   # (--device NAME=URL adds/overrides the URL)
  bowl: /dev/ttyUSB0
  bus: {url: /dev/ttyUSB1, dialect: xocdia-bus, roles: [SHAKER, CONSOLE], options: {poll_interval_s: 0.05}}
  reader: {url: /dev/ttyUSB2, untagged_reports: accept}   # this line's devices send no round tags
dialect: xocdia-ascii     # the default device dialect (docs/server.md, "Device dialects"); --dialect overrides
heartbeat_timeout_s: 3.0
untagged_reports: refuse  # accept: 1.0 compatibility, untagged results and lifts count (docs/protocol.md §7)
http:              # limits on requests and connections (gameserver/http_limits.py); every key optional
  max_header_bytes: 16384
trace: {max_bytes: 16777216, keep: 4}   # the serial trace, rotated (gameserver/trace_file.py)
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from gameserver.dialects import DEFAULT, DIALECTS, ROLES, LineConfigError, line_options
from gameserver.http_limits import FIELDS as HTTP_FIELDS
from gameserver.http_limits import HttpLimits
from gameserver.model import EngineConfig
from gameserver.trace_file import DEFAULT_KEEP, DEFAULT_MAX_BYTES

_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


class ConfigError(Exception):
    """The configuration is invalid; the message names the field and the allowed values."""


@dataclass(frozen=True)
class Principal:
    """Who a token belongs to: a player (may act on their own account only) or a supervisor."""

    id: str
    role: str  # "player" | "supervisor"


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server process needs besides its command-line arguments."""

    engine: EngineConfig = field(default_factory=EngineConfig)
    wallets: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, Principal] = field(default_factory=dict)
    devices: dict[str, str] = field(default_factory=dict)
    heartbeat_timeout_s: float = 3.0
    accept_untagged: bool = False
    dialect: str = DEFAULT
    device_dialects: dict[str, str] = field(default_factory=dict)  # per line, overriding ``dialect``
    device_roles: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the devices a line carries
    device_options: dict[str, dict[str, float]] = field(default_factory=dict)  # a line's dialect options, as given
    device_untagged: dict[str, bool] = field(default_factory=dict)  # per line, overriding ``accept_untagged``
    http: HttpLimits = field(default_factory=HttpLimits)
    trace_max_bytes: int = DEFAULT_MAX_BYTES  # the serial trace's file is rotated at this size
    trace_keep: int = DEFAULT_KEEP  # rotated trace files kept


def _need(cond: bool, where: str, allowed: str) -> None:
    if not cond:
        raise ConfigError(f"{where}: {allowed}")


def parse_config(raw: object, source: str = "config") -> ServerConfig:
    """Validate a parsed YAML document. Raises ConfigError naming the first bad field."""
    if raw is None:
        raw = {}
    _need(isinstance(raw, dict), source, "must be a mapping with keys engine, players, supervisors, devices")
    assert isinstance(raw, dict)
    known = {
        *("engine", "players", "supervisors", "devices", "heartbeat_timeout_s", "untagged_reports", "dialect"),
        *("http", "trace"),
    }
    extra = sorted(set(raw) - known)
    _need(
        not extra,
        f"{source}: unknown key {extra[0] if extra else ''}",
        f"allowed: {', '.join(sorted(known))}",
    )
    engine = _engine(raw.get("engine") or {}, f"{source}.engine")
    tokens: dict[str, Principal] = {}
    wallets: dict[str, int] = {}
    for role, key in (("player", "players"), ("supervisor", "supervisors")):
        entries = raw.get(key) or []
        _need(isinstance(entries, list), f"{source}.{key}", "must be a list of {id, token, ...} mappings")
        for i, entry in enumerate(entries):
            where = f"{source}.{key}[{i}]"
            _need(isinstance(entry, dict), where, "must be a mapping with id and token")
            pid, token = entry.get("id"), entry.get("token")
            _need(
                isinstance(pid, str) and bool(_ID.match(pid)),
                f"{where}.id",
                "1-64 characters of A-Z a-z 0-9 _ . : -",
            )
            _need(
                isinstance(token, str) and len(token) >= 8,
                f"{where}.token",
                "a string of at least 8 characters",
            )
            _need(token not in tokens, f"{where}.token", "must be unique")
            tokens[token] = Principal(pid, role)
            if role == "player":
                balance = entry.get("balance", 0)
                _need(type(balance) is int and balance >= 0, f"{where}.balance", "an integer >= 0 (minor units)")
                _need(pid not in wallets, f"{where}.id", "must be unique")
                wallets[pid] = balance
    dialect = raw.get("dialect", DEFAULT)
    _need(dialect in DIALECTS, f"{source}.dialect", f"one of {', '.join(DIALECTS)}")
    devices = raw.get("devices") or {}
    _need(isinstance(devices, dict), f"{source}.devices", "must map NAME to a pyserial URL")
    devs: dict[str, str] = {}
    dialects: dict[str, str] = {}
    roles: dict[str, tuple[str, ...]] = {}
    options: dict[str, dict[str, float]] = {}
    untagged_lines: dict[str, bool] = {}
    for name, entry in devices.items():
        where = f"{source}.devices.{name}"
        if isinstance(entry, dict):
            unknown = sorted(set(entry) - {"url", "dialect", "roles", "options", "untagged_reports"})
            _need(
                not unknown,
                f"{where}.{unknown[0] if unknown else ''}",
                "unknown key; allowed: url, dialect, roles, options, untagged_reports",
            )
            if "untagged_reports" in entry:
                line_untagged = entry["untagged_reports"]
                _need(
                    line_untagged in ("refuse", "accept"),
                    f"{where}.untagged_reports",
                    "refuse or accept (default: the top-level untagged_reports)",
                )
                untagged_lines[str(name)] = line_untagged == "accept"
            url = entry.get("url")
            if "dialect" in entry:
                _need(entry["dialect"] in DIALECTS, f"{where}.dialect", f"one of {', '.join(DIALECTS)}")
                dialects[str(name)] = str(entry["dialect"])
            if "options" in entry:
                options[str(name)] = _line_options(entry["options"], dialects.get(str(name), str(dialect)), where)
            if "roles" in entry:
                r = entry["roles"]
                _need(
                    isinstance(r, list) and bool(r) and all(x in ROLES for x in r) and len(set(r)) == len(r),
                    f"{where}.roles",
                    f"a list of distinct device names from {', '.join(ROLES)}",
                )
                roles[str(name)] = tuple(str(x) for x in r)
        else:
            url = entry
        _need(
            isinstance(url, str) and bool(url),
            f"{where}" + (".url" if isinstance(entry, dict) else ""),
            "must be a pyserial URL string",
        )
        devs[str(name)] = str(url)
    hb = raw.get("heartbeat_timeout_s", 3.0)
    _need(
        isinstance(hb, int | float) and not isinstance(hb, bool) and hb > 0,
        f"{source}.heartbeat_timeout_s",
        "a number > 0",
    )
    untagged = raw.get("untagged_reports", "refuse")
    _need(untagged in ("refuse", "accept"), f"{source}.untagged_reports", "refuse (default) or accept")
    http = _http(raw.get("http") or {}, f"{source}.http")
    trace_max, trace_keep = _trace(raw.get("trace") or {}, f"{source}.trace")
    return ServerConfig(
        engine, wallets, tokens, devs, float(hb), untagged == "accept", str(dialect), dialects, roles, options,
        untagged_lines, http, trace_max, trace_keep,
    )  # fmt: skip


def _trace(raw: object, where: str) -> tuple[int, int]:
    """The ``trace`` section: ``max_bytes`` (4096..2**40) and ``keep`` (0..100) of the rotated serial trace."""
    _need(isinstance(raw, dict), where, "must be a mapping with max_bytes and keep")
    assert isinstance(raw, dict)
    unknown = sorted(set(raw) - {"max_bytes", "keep"})
    _need(not unknown, f"{where}.{unknown[0] if unknown else ''}", "unknown key; allowed: max_bytes, keep")
    size, keep = raw.get("max_bytes", DEFAULT_MAX_BYTES), raw.get("keep", DEFAULT_KEEP)
    _need(
        type(size) is int and 4096 <= size <= 2**40,
        f"{where}.max_bytes",
        f"must be a whole number 4096..2**40; got {size!r}",
    )
    _need(type(keep) is int and 0 <= keep <= 100, f"{where}.keep", f"must be a whole number 0..100; got {keep!r}")
    return size, keep


def _http(raw: object, where: str) -> HttpLimits:
    """The ``http`` section: each limit of :class:`HttpLimits` (those not given keep their defaults)."""
    _need(isinstance(raw, dict), where, "must be a mapping of HTTP limits")
    assert isinstance(raw, dict)
    allowed = {name: (kind, low, high) for name, kind, low, high in HTTP_FIELDS}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        _need(key in allowed, f"{where}.{key}", f"unknown key; allowed: {', '.join(allowed)}")
        kind, low, high = allowed[key]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if kind is int:
            ok = type(value) is int and low <= value <= high
            what = f"a whole number {low:g}..{high:g}"
        else:
            ok = number and low <= value <= high
            what = f"a number of seconds {low:g}..{high:g}"
        _need(ok, f"{where}.{key}", f"must be {what}; got {value!r}")
        values[key] = kind(value)
    return HttpLimits(**values)


def _line_options(raw: object, dialect: str, where: str) -> dict[str, float]:
    """A line's ``options`` for its dialect (docs/dialects/): only the ones given, each checked."""
    _need(isinstance(raw, dict), f"{where}.options", f"must be a mapping of {dialect} options")
    assert isinstance(raw, dict)
    try:
        line_options(dialect, raw)
    except LineConfigError as exc:
        raise ConfigError(f"{where}.{exc}") from None
    return {str(k): v for k, v in raw.items()}


def _engine(raw: object, where: str) -> EngineConfig:
    _need(isinstance(raw, dict), where, "must be a mapping")
    assert isinstance(raw, dict)
    types = {f.name: f.type for f in fields(EngineConfig)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        _need(key in types, f"{where}.{key}", f"unknown key; allowed: {', '.join(types)}")
        kind = str(types[key])
        if kind == "bool":
            _need(isinstance(value, bool), f"{where}.{key}", "true or false")
        elif kind == "int":
            _need(type(value) is int, f"{where}.{key}", "an integer")
        else:
            _need(isinstance(value, int | float) and not isinstance(value, bool), f"{where}.{key}", "a number")
        values[key] = value
    try:
        return EngineConfig(**values)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def load_config(path: str | Path) -> ServerConfig:
    """Read and validate a YAML config file. Raises ConfigError for an unreadable file or a bad field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {_yaml_problem(exc)}") from None
    return parse_config(raw, str(path))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the problem and where (PyYAML's own text spans several lines)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem}{where}"
