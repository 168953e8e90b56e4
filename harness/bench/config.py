"""Bench files (``fixtures/benches/*.yaml``): what a certification run is wired to, validated field by field.

Every error is a :class:`BenchError` whose message names the file, the dotted field and what is allowed, e.g.
``local-hil.yaml: devices.transport: must be one of memory, pty, url; got 'tty'``. Unknown keys are errors
(a typo must never fall back to a default silently). See ``docs/benches.md`` for every field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.files import FIXTURES, Fields, parse_yaml, read_text, shipped_names
from harness.table_config import TableConfig, TableConfigError, parse_table_config, reference_refusal
from harness.wire.dialects import DEFAULT_DIALECT, Dialect, DialectError, LineSpec, load_dialect, plan_lines
from harness.wire.transports.line import DEFAULT_LINE, LineSettings, LineSettingsError
from harness.wire.transports.listen import LISTEN_FORMS, ListenUrlError, is_listen_url, parse_listen_url
from harness.wire.transports.mqtt import MQTT_FORMS, MqttUrlError, is_mqtt_url, parse_mqtt_url, require_mqtt

BENCH_DIR = FIXTURES / "benches"
SERVER_KINDS = ("in-process", "command", "url")
TRANSPORTS = ("memory", "pty", "url")
DEFAULT_ADAPTERS = {
    "in-process": "harness.bench.adapters.reference_inprocess:InProcessAdapter",
    "command": "harness.bench.adapters.reference_http:HttpAdapter",
    "url": "harness.bench.adapters.reference_http:HttpAdapter",  # attaches to a running reference server
}


class BenchError(InputError):
    """A bench file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Which game server: the in-process engine, a command that starts the reference server, or a URL."""

    kind: str
    adapter: str
    command: tuple[str, ...] = ()
    url: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    #: Who opens rounds: ``harness`` (the supervisor, through the adapter) or ``server`` (on its own timer; the rig
    #: then follows what the server opens).
    opens_rounds: str = "harness"

    def adapter_options(self) -> dict[str, Any]:
        """What the adapter is constructed with: ``server.options`` plus ``url`` and ``command`` (the bench's)."""
        return {**self.options, "url": self.url, "command": list(self.command)}


@dataclass(frozen=True, slots=True)
class Timing:
    """Server-side timings the bench asks for (seconds); the table's own timings come from the profile."""

    betting_s: float
    round_gap_s: float
    result_timeout_s: float
    heartbeat_s: float
    step_timeout_s: float  # the most (sim or wall) seconds a step waits for the server before it fails


@dataclass(frozen=True, slots=True)
class Bench:
    name: str
    path: Path
    server: ServerSettings
    transport: str
    device_urls: dict[str, str]
    reader_latency_s: float
    profile: str
    seed: int
    players: int
    timing: Timing
    faults_allowed: bool
    line: LineSettings | None = None  # devices.line as the file set it; None: not set
    dialect: Dialect = field(default_factory=lambda: load_dialect(DEFAULT_DIALECT))
    dialect_spec: str = DEFAULT_DIALECT  # as the bench file (or --dialect) named it
    #: ``accounts``: the lab's account pool on a server attached by URL, player id -> the balance (minor units) the
    #: account holds when a scenario starts; None when the file declares none (the bench or its adapter then
    #: creates each scenario's wallets itself).
    accounts: dict[str, int] | None = None
    #: ``table``: the server's choices on what the rules leave open (docs/table-configuration.md); the reference
    #: server's when the file declares none.
    table: TableConfig = field(default_factory=TableConfig)
    #: ``identify.files``: the lab's own files (paths or globs relative to the bench file) whose digests the kit takes
    #: itself into the system's identification (docs/benches.md, "The lab's own digests"); empty when not set.
    identify_files: tuple[str, ...] = ()

    @property
    def lines(self) -> list[LineSpec]:
        """The table's lines under the bench's dialect (every device on exactly one line)."""
        return plan_lines(self.dialect)

    @property
    def paced_line(self) -> LineSettings | None:
        """The speed the device lines run at: ``devices.line``, else 115200 8N1 on pty and url lines (real time);
        None (unpaced) for in-memory lines whose file sets none."""
        if self.line is not None:
            return self.line
        return DEFAULT_LINE if self.transport in ("pty", "url") else None

    @property
    def realtime(self) -> bool:
        """True when the server runs on the wall clock (anything but the in-process engine)."""
        return self.server.kind != "in-process"

    @property
    def attached_by_url(self) -> bool:
        """True when the server or the device lines are attached by URL: there is one server and one set of device
        lines, which every scenario shares, so scenarios can only run one after another."""
        return self.server.kind == "url" or self.transport == "url"

    def workers_refusal(self, option: str, workers: int) -> str:
        """Why ``workers`` parallel workers (asked for with ``option``, e.g. ``--workers``) cannot run on this bench,
        in one line; empty when they can (two or more are refused on a bench :attr:`attached_by_url`)."""
        if workers < 2 or not self.attached_by_url:
            return ""
        return (
            f"{option} {workers}: bench {self.name} is attached by URL (one server, one set of device lines, shared "
            f"by every scenario); use {option} 0 or 1"
        )


_TOP = (
    "name",
    "server",
    "devices",
    "profile",
    "seed",
    "players",
    "timing",
    "faults_allowed",
    "accounts",
    "table",
    "description",
    "identify",
    "evidence",  # the performer and approver of an evidence pack, read by harness.evidence.people
)
_SERVER = ("kind", "adapter", "command", "url", "options", "opens_rounds")
OPENERS = ("harness", "server")
_DEVICES = ("transport", "urls", "reader_latency_s", "line", "dialect", "options")
_TIMING = ("betting_s", "round_gap_s", "result_timeout_s", "heartbeat_s", "step_timeout_s")
_TIMING_DEFAULTS = {
    "betting_s": 0.3,
    "round_gap_s": 0.05,
    "result_timeout_s": 5.0,
    "heartbeat_s": 3.0,
    "step_timeout_s": 30.0,
}


def parse_bench(raw: object, path: Path) -> Bench:
    """Validate a parsed bench document.

    Raises:
        BenchError: a missing, unknown or out-of-range field (the message names it and the allowed values).
    """
    c = Fields(path.name, BenchError)
    top = c.mapping(raw, "", _TOP)
    for key in ("server", "devices"):
        if key not in top:
            raise c.fail(key, "missing (required)", None)
    srv = c.mapping(top["server"], "server", _SERVER)
    kind = c.choice(srv.get("kind"), "server.kind", SERVER_KINDS)
    adapter = srv.get("adapter", DEFAULT_ADAPTERS.get(kind))
    if not isinstance(adapter, str) or ":" not in adapter:
        raise c.fail("server.adapter", "must be a dotted path 'package.module:ClassName'", adapter)
    command = srv.get("command", ["xocdia-server"] if kind == "command" else [])
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise c.fail("server.command", "must be a list of strings (the argv prefix)", command)
    if kind == "command" and not command:
        raise c.fail("server.command", "must not be empty when server.kind is command", command)
    url = srv.get("url", "")
    if kind == "url" and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise c.fail("server.url", "must be an http:// or https:// URL when server.kind is url", url)
    options = srv.get("options", {})
    if not isinstance(options, dict):
        raise c.fail("server.options", "must be a mapping (passed to the adapter)", options)
    opens_rounds = c.choice(srv.get("opens_rounds", "harness"), "server.opens_rounds", OPENERS)
    dev = c.mapping(top["devices"], "devices", _DEVICES)
    transport = c.choice(dev.get("transport"), "devices.transport", TRANSPORTS)
    dialect_spec = dev.get("dialect", DEFAULT_DIALECT)
    dialect_options = dev.get("options", {})
    if not isinstance(dialect_options, dict):
        raise c.fail("devices.options", "must be a mapping (passed to the dialect)", dialect_options)
    try:
        dialect = load_dialect(dialect_spec, dialect_options)
        names = tuple(line.name for line in plan_lines(dialect))
    except DialectError as exc:
        raise BenchError(f"{path.name}: {exc}") from None
    urls = dev.get("urls", {})
    if not isinstance(urls, dict) or not all(isinstance(v, str) for v in urls.values()):
        allowed = "must map line names to pyserial URLs, listen://HOST:PORT or mqtt://HOST:PORT/PREFIX"
        raise c.fail("devices.urls", allowed, urls)
    for name in urls:
        c.choice(name, "devices.urls", names)
    _listen_urls(c, urls, kind)
    _mqtt_urls(c, urls)
    if transport == "url" and set(urls) != set(names):
        raise c.fail("devices.urls", f"must name a URL for every line ({', '.join(names)})", sorted(urls))
    reader_latency = _seconds(c, dev.get("reader_latency_s", 0.0), "devices.reader_latency_s", 0.0, 10.0)
    line = _line(c, dev.get("line"))
    if kind == "in-process" and transport != "memory":
        raise c.fail("devices.transport", "must be memory when server.kind is in-process", transport)
    if kind != "in-process" and transport == "memory":  # a server process or URL cannot open in-memory lines
        raise c.fail("devices.transport", f"must be one of pty, url when server.kind is {kind}", transport)
    t = c.mapping(top.get("timing", {}), "timing", _TIMING)
    values = {k: _seconds(c, t.get(k, d), f"timing.{k}", 0.001, 3600.0) for k, d in _TIMING_DEFAULTS.items()}
    profile = top.get("profile", "certification")
    if not isinstance(profile, str) or not profile:
        raise c.fail("profile", "must be a profile name or path", profile)
    faults = c.flag(top.get("faults_allowed", False), "faults_allowed")
    name = top.get("name", path.stem)
    if not isinstance(name, str):
        raise c.fail("name", "must be text", name)
    accounts = _accounts(c, top.get("accounts"), kind)
    table = _table(path.name, top.get("table"), values["result_timeout_s"], t, kind, adapter)
    return Bench(
        name=name,
        path=path,
        server=ServerSettings(kind, adapter, tuple(command), url, dict(options), opens_rounds),
        transport=transport,
        device_urls={str(k): str(v) for k, v in urls.items()},
        reader_latency_s=reader_latency,
        profile=profile,
        seed=c.whole(top.get("seed", 1), "seed", 0, 2**63 - 1),
        players=c.whole(top.get("players", 0), "players", 0, 1000),
        timing=Timing(**values),
        faults_allowed=faults,
        line=line,
        dialect=dialect,
        dialect_spec=str(dialect_spec),
        accounts=accounts,
        table=table,
        identify_files=_identify(c, top.get("identify")),
    )


def _identify(c: Fields, raw: object) -> tuple[str, ...]:
    """``identify`` (empty when absent): ``{files: [...]}``, each a path or a glob (``*``, ``?``, ``[...]``, ``**``)
    relative to the bench file, or absolute. Raises BenchError naming ``identify`` or ``identify.files``; whether
    each matches a file is checked when the identification is taken (``harness.evidence.identity``)."""
    if raw is None:
        return ()
    spec = c.mapping(raw, "identify", ("files",))
    files = spec.get("files")
    if not (isinstance(files, list) and files and all(isinstance(f, str) and f.strip() for f in files)):
        raise c.fail(
            "identify.files", "must be a non-empty list of file paths or globs relative to the bench file", files
        )
    return tuple(files)


def _table(
    source: str, raw: object, result_timeout_s: float, timing: dict[str, Any], kind: str, adapter: str
) -> TableConfig:
    """``table`` (docs/table-configuration.md); its ``result_timeout_s`` defaults to ``timing.result_timeout_s`` and
    may not be set in both places. On a bench whose server the kit starts with its reference adapter, a choice the
    reference server cannot make is refused naming the field.

    Raises:
        BenchError: an invalid ``table`` field, or one the reference server cannot follow.
    """
    if isinstance(raw, dict) and "result_timeout_s" in raw and "result_timeout_s" in timing:
        raise BenchError(f"{source}: table.result_timeout_s: set it here or in timing.result_timeout_s, not both")
    try:
        table = parse_table_config(raw, source, result_timeout_s)
    except TableConfigError as exc:
        raise BenchError(str(exc)) from None
    if kind != "url" and adapter == DEFAULT_ADAPTERS[kind]:
        why = reference_refusal(table)
        if why:
            raise BenchError(f"{source}: {why} (server.kind {kind} starts the reference server)")
    return table


_URL_FORMS = f"{LISTEN_FORMS} or a pyserial URL (socket://HOST:PORT, rfc2217://HOST:PORT, /dev/ttyUSB0)"


def _listen_urls(c: Fields, urls: dict[str, str], kind: str) -> None:
    """Check each ``devices.urls`` entry that listens (``listen://HOST:PORT``): a host and a port in range; port 0
    (any free port) only when ``kind`` is ``command`` (the bench tells the server it starts the port bound); no two
    lines on the same fixed port of one address (a wildcard address, ``0.0.0.0`` or ``::``, is every address). Other
    entries are pyserial's to open. Raises BenchError naming ``devices.urls.LINE`` and the allowed forms."""
    seen: dict[int, list[tuple[str, str]]] = {}
    for name, url in urls.items():
        if not is_listen_url(url):
            continue
        where = f"devices.urls.{name}"
        try:
            address = parse_listen_url(url)
        except ListenUrlError as exc:
            raise c.fail(where, f"{exc.why}; must be {_URL_FORMS}", url) from None
        if address.port == 0 and kind != "command":
            raise c.fail(
                where,
                f"port 0 (any free port) only when server.kind is command (the bench tells the server it starts the "
                f"port it gets); server.kind {kind}: give the port the server dials, 1-65535",
                url,
            )
        host = address.host.lower()
        for other_host, other in seen.get(address.port, []) if address.port else []:
            if host == other_host or {host, other_host} & {"0.0.0.0", "::"}:
                raise c.fail(where, f"listens on the same address as devices.urls.{other} (one line a port)", url)
        seen.setdefault(address.port, []).append((host, name))


def _mqtt_urls(c: Fields, urls: dict[str, str]) -> None:
    """Check each ``devices.urls`` entry on an MQTT broker (``mqtt://HOST:PORT/PREFIX``): a host, a port in 1-65535
    and a topic prefix without wildcards or empty levels; and that the MQTT client is installed.

    Raises:
        BenchError: a malformed entry, naming ``devices.urls.LINE`` and the form allowed.
        MissingExtra: paho-mqtt is not installed (the message names the field and ``xocdia-hil[mqtt]``).
    """
    for name, url in urls.items():
        if not is_mqtt_url(url):
            continue
        try:
            parse_mqtt_url(url)
        except MqttUrlError as exc:
            raise c.fail(f"devices.urls.{name}", f"{exc.why}; must be {MQTT_FORMS}", url) from None
        require_mqtt(f"{c.source}: devices.urls.{name} ({url})")


def _accounts(c: Fields, raw: object, kind: str) -> dict[str, int] | None:
    """``accounts`` (None when absent): player ids (letters, digits, ``_``) to whole minor units >= 0, on a
    ``server.kind: url`` bench only (the other kinds' servers get their players from the harness)."""
    if raw is None:
        return None
    if kind != "url":
        raise c.fail("accounts", "only for server.kind url (on the others the harness creates every wallet)", kind)
    if not isinstance(raw, dict):
        raise c.fail("accounts", "must map player ids to opening balances in minor units", raw)
    pool: dict[str, int] = {}
    for player, balance in raw.items():
        if not (isinstance(player, str) and re.fullmatch(r"\w+", player)):
            raise c.fail("accounts", "must map player ids (letters, digits, _) to balances", player)
        pool[player] = c.whole(balance, f"accounts.{player}", 0, 2**63 - 1)
    return pool


def with_dialect(bench: Bench, spec: str, options: dict[str, Any] | None = None) -> Bench:
    """``bench`` speaking another dialect (``--dialect``). Raises BenchError naming the dialect, an option, or a
    ``devices.urls`` entry that no longer names a line."""
    try:
        dialect = load_dialect(spec, options or {}, field="--dialect")
        names = [line.name for line in plan_lines(dialect)]
    except DialectError as exc:
        raise BenchError(f"{bench.path.name}: {exc}") from None
    if bench.transport == "url" and set(bench.device_urls) != set(names):
        raise BenchError(
            f"{bench.path.name}: devices.urls: must name a URL for every line of dialect {spec!r} ({', '.join(names)});"
            f" got {', '.join(sorted(bench.device_urls))}"
        )
    return replace(bench, dialect=dialect, dialect_spec=spec)


_LINE = ("baud", "bytesize", "parity", "stopbits", "inter_byte_gap_s")


def _line(c: Fields, raw: object) -> LineSettings | None:
    """``devices.line`` (None when absent): each field checked by :class:`LineSettings`, named in the message."""
    if raw is None:
        return None
    fields = c.mapping(raw, "devices.line", _LINE)
    try:
        return LineSettings(**fields)
    except LineSettingsError as exc:
        raise c.fail(f"devices.line.{exc.field}", exc.allowed, exc.got) from None


def _seconds(c: Fields, value: object, where: str, low: float, high: float) -> float:
    return c.number(value, where, low, high, f"must be a number of seconds in [{low}, {high}]")


def load_bench(path: str | Path, dialect: str | None = None) -> Bench:
    """Load a bench by path, or by shipped name (``in-process`` → ``fixtures/benches/in-process.yaml``); with
    ``dialect`` (``--dialect``), its devices speak that dialect instead (the file's ``devices.options`` apply only
    when the file names the same dialect).

    Raises:
        BenchError: no such file (the message lists the shipped benches), YAML that does not parse, an invalid
            field, or an unknown dialect.
    """
    p = Path(path)
    if not p.exists() and not str(path).endswith((".yaml", ".yml")):
        p = BENCH_DIR / f"{path}.yaml"
    text = read_text(
        p, "bench", BenchError, shown=path, hint=lambda: f"; shipped benches: {', '.join(shipped_names(BENCH_DIR))}"
    )
    bench = parse_bench(parse_yaml(text, p.name, BenchError), p)
    if dialect and dialect != bench.dialect_spec:
        return with_dialect(bench, dialect)
    return bench
