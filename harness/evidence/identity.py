"""What the system under test is: the identification a certify run records at its start and its end.

An :class:`Identification` joins what the system reports about itself (an adapter's optional ``identify()``), the
identities its device lines announce (where the dialect carries them) and the digests a lab lists in its bench file
(files the kit hashes itself). Each part is a :class:`Component` named once, with a SHA-256 digest and its source.

How to take one (docs/adapters.md "Identifying the system", docs/benches.md "The lab's own digests"):

- :func:`identify_bench` ``(bench)`` opens the bench as a scenario does (:meth:`harness.bench.rig.Rig.build`, no
  players), lets its device lines greet each other, identifies it and closes it. Costs one server start.
- :func:`identify_adapter` ``(adapter, bench, recorder=None)`` identifies an adapter that is already started (a
  running scenario's, or certify's own), with the lab's files of ``bench``; with ``recorder`` (a rig's serial trace)
  also the identities the server's ends of the lines announced in it. Costs one ``identify()`` call and the hashing.
- :func:`identify_rig` ``(rig)`` is :func:`identify_adapter` on a rig's adapter, bench and trace.

Components and their sources:

- ``system``: what the adapter's :class:`~harness.bench.adapters.capabilities.Identifying` ``identify()`` reported
  (the reference server: each of its package files, ``gameserver/engine.py`` ..., and ``config``). An adapter
  without ``identify()``, or whose ``identify()`` raises ``AdapterError("not_supported")``, gives
  ``identified=False`` and a note starting "not identified by the system"; it never fails the identification.
- ``device``: ``device:<line>``, the digest of the identity the server's end of that line announced in its HELLO
  (``id=SRV-ref proto=1 fw=0.1.0``; the text is the component's ``detail``), read from the rig's serial trace. Only
  lines whose dialect declares ``identities`` carry one; the kit's own emulated devices' HELLOs are the kit's, not
  the system's, and are not recorded. :func:`identify_adapter` without a recorder records none.
- ``lab``: ``lab:<path>``, the SHA-256 of each file the bench file's ``identify.files`` names (paths or globs relative
  to the bench file), hashed by the kit.

:func:`identity_changes` compares two identifications line by line (the "is this a major change?" question).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.bench.adapters.base import GameServerAdapter
from harness.bench.adapters.capabilities import Identifying
from harness.bench.clock import BenchTimeout
from harness.bench.config import Bench, BenchError
from harness.bench.rig import Rig
from harness.errors import AdapterError, InputError
from harness.evidence.digest import sha256_bytes, sha256_file
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Hello, Source
from harness.wire.trace import TraceRecorder

__all__ = [
    "NOT_IDENTIFIED",
    "SOURCES",
    "Component",
    "Identification",
    "device_components",
    "identify_adapter",
    "identify_bench",
    "identify_rig",
    "identity_changes",
    "lab_components",
]

NOT_IDENTIFIED = "not identified by the system"
SOURCES = ("system", "device", "lab")
#: A digest of at least 256 bits, as ``ALGORITHM:<lower-case hex>``.
DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128})$")
DIGEST_FORMS = "sha256:<64 hex>, sha384:<96 hex> or sha512:<128 hex>, lower case"
#: Wall or sim seconds :func:`identify_bench` waits for the server's HELLO on every line that carries one.
HELLO_WAIT_S = 3.0
_KIT_PREFIXES = ("device:", "lab:")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Component:
    """One identified part: ``name`` unique within an identification (``gameserver/engine.py``, ``config``,
    ``device:bowl``, ``lab:firmware.bin``), ``digest`` as ``sha256:<64 hex>``, ``source`` one of ``system``
    (reported by the system), ``device`` (a device line's announced identity) or ``lab`` (hashed by the kit).
    ``detail``: what was digested when it is short and readable (a device's announced identity), else empty."""

    name: str
    digest: str
    source: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"name": self.name, "digest": self.digest, "source": self.source}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Identification:
    """The system under test at one moment. ``identified`` is False when the system reported nothing (the adapter
    has no ``identify()``): ``note`` then says so ("not identified by the system ..."), and the device and lab
    components, if any, are still recorded. ``components`` are kept sorted by name; two of one name raise
    ValueError."""

    identified: bool
    name: str | None = None
    version: str | None = None
    build: str | None = None
    components: tuple[Component, ...] = ()
    note: str = ""
    taken_at: str = ""  # ISO 8601 UTC, when it was taken
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.components, key=lambda c: c.name))
        names = [c.name for c in ordered]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"identification: component {twice[0]!r} named twice")
        object.__setattr__(self, "components", ordered)
        object.__setattr__(self, "extra", dict(sorted(self.extra.items())))

    def component(self, name: str) -> Component | None:
        """The component named ``name``, or None."""
        return next((c for c in self.components if c.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe mapping (every key present; components sorted by name) that :meth:`from_json` reads back
        into an equal identification."""
        return {
            "identified": self.identified,
            "name": self.name,
            "version": self.version,
            "build": self.build,
            "components": [c.to_json() for c in self.components],
            "note": self.note,
            "taken_at": self.taken_at,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Identification:
        """Read what :meth:`to_json` wrote.

        Raises:
            InputError: a missing or mistyped field, a digest not of the allowed forms, a source not one of
                :data:`SOURCES` or a component named twice (the message names the field).
        """
        if not isinstance(raw, dict):
            raise InputError(f"identification: must be a JSON object; got {type(raw).__name__}")
        keys = ("identified", "name", "version", "build", "components", "note", "taken_at", "extra")
        unknown = sorted(set(raw) - set(keys))
        if unknown:
            raise InputError(f"identification: unknown field {unknown[0]!r} (allowed: {', '.join(keys)})")
        if not isinstance(raw.get("identified"), bool):
            raise InputError(f"identification.identified: must be true or false; got {raw.get('identified')!r}")
        texts: dict[str, str | None] = {}
        for key in ("name", "version", "build"):
            value = raw.get(key)
            if value is not None and not isinstance(value, str):
                raise InputError(f"identification.{key}: must be text or null; got {value!r}")
            texts[key] = value
        for key in ("note", "taken_at"):
            if not isinstance(raw.get(key, ""), str):
                raise InputError(f"identification.{key}: must be text; got {raw.get(key)!r}")
        extra = raw.get("extra", {})
        if not (isinstance(extra, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items())):
            raise InputError(f"identification.extra: must map text to text; got {extra!r}")
        items = raw.get("components", [])
        if not isinstance(items, list):
            raise InputError(f"identification.components: must be a list; got {items!r}")
        components = tuple(_component_of(item, f"identification.components[{i}]") for i, item in enumerate(items))
        try:
            return cls(
                raw["identified"],
                texts["name"],
                texts["version"],
                texts["build"],
                components,
                raw.get("note", ""),
                raw.get("taken_at", ""),
                dict(extra),
            )
        except ValueError as exc:
            raise InputError(str(exc)) from None


def _component_of(item: object, where: str) -> Component:
    if not isinstance(item, dict) or set(item) - {"name", "digest", "source", "detail"}:
        raise InputError(f"{where}: must be an object of name, digest, source and optionally detail; got {item!r}")
    name, digest, source, detail = item.get("name"), item.get("digest"), item.get("source"), item.get("detail", "")
    if not (isinstance(name, str) and name):
        raise InputError(f"{where}.name: must be non-empty text; got {name!r}")
    if not (isinstance(digest, str) and DIGEST.match(digest)):
        raise InputError(f"{where}.digest: must be {DIGEST_FORMS}; got {digest!r}")
    if source not in SOURCES:
        raise InputError(f"{where}.source: must be one of {', '.join(SOURCES)}; got {source!r}")
    if not isinstance(detail, str):
        raise InputError(f"{where}.detail: must be text; got {detail!r}")
    return Component(name, digest, str(source), detail)


# --- what the system reports ----------------------------------------------------------------------------------


def _reported(raw: object, who: str) -> tuple[str, str, str, list[Component], dict[str, str]]:
    """An ``identify()`` answer checked: (name, version, build, components, extra).

    Raises:
        AdapterError: ``bad_identity`` naming the field that is missing or not of the allowed form.
    """

    def bad(where: str, allowed: str, got: object) -> AdapterError:
        return AdapterError("bad_identity", f"{who}.identify(): {where}: {allowed}; got {got!r}")

    if not isinstance(raw, Mapping):
        raise bad("the answer", "must be a mapping of name, version, build, components", raw)
    unknown = sorted(set(raw) - {"name", "version", "build", "components", "extra"})
    if unknown:
        raise bad(unknown[0], "unknown key (allowed: name, version, build, components, extra)", raw[unknown[0]])
    texts = []
    for key in ("name", "version"):
        if not (isinstance(raw.get(key), str) and raw[key]):
            raise bad(key, "must be non-empty text", raw.get(key))
        texts.append(str(raw[key]))
    build = raw.get("build")
    if not (isinstance(build, str) and DIGEST.match(build)):
        raise bad("build", f"must be {DIGEST_FORMS}", build)
    parts = raw.get("components")
    if not (isinstance(parts, Mapping) and parts):
        raise bad("components", "must be a non-empty mapping of component name to digest", parts)
    components = []
    for name, digest in parts.items():
        if not (isinstance(name, str) and name) or name.startswith(_KIT_PREFIXES):
            raise bad("components", "names must be non-empty text not starting device: or lab: (the kit's)", name)
        if not (isinstance(digest, str) and DIGEST.match(digest)):
            raise bad(f"components.{name}", f"must be {DIGEST_FORMS}", digest)
        components.append(Component(name, digest, "system"))
    extra = raw.get("extra", {})
    if not (isinstance(extra, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items())):
        raise bad("extra", "must map text to text", extra)
    return texts[0], texts[1], build, components, dict(extra)


def identify_adapter(adapter: GameServerAdapter, bench: Bench, recorder: TraceRecorder | None = None) -> Identification:
    """The identification of the started ``adapter``'s system now: what it reports (when it is
    :class:`~harness.bench.adapters.capabilities.Identifying`), the server's announced identities in ``recorder``
    (:func:`device_components`; none without it) and the lab's files of ``bench`` (:func:`lab_components`).

    Raises:
        BenchError: an ``identify.files`` entry matches no file, or one cannot be read.
        AdapterError: ``identify()`` failed (``unreachable`` ...), or answered ``bad_identity`` (a field not of the
            form :class:`~harness.bench.adapters.capabilities.Identifying` states); ``not_supported`` is not raised
            but recorded as not identified.
    """
    kit = lab_components(bench)
    extra: dict[str, str] = {"adapter": bench.server.adapter}
    if recorder is not None:
        devices, said = device_components(bench, recorder)
        kit += devices
        if said:
            extra["device_lines"] = said
    who = type(adapter).__name__
    if not isinstance(adapter, Identifying):
        note = f"{NOT_IDENTIFIED} (adapter {who} has no identify())"
        return Identification(False, components=tuple(kit), note=note, taken_at=_now(), extra=extra)
    try:
        raw = adapter.identify()
    except AdapterError as exc:
        if exc.code != "not_supported":
            raise
        note = f"{NOT_IDENTIFIED} (adapter {who}: {exc.message})"
        return Identification(False, components=tuple(kit), note=note, taken_at=_now(), extra=extra)
    name, version, build, system, reported_extra = _reported(raw, who)
    return Identification(True, name, version, build, (*system, *kit), "", _now(), {**reported_extra, **extra})


def identify_rig(rig: Rig) -> Identification:
    """:func:`identify_adapter` on ``rig``'s adapter and bench, with the server's identities in its serial trace."""
    return identify_adapter(rig.adapter, rig.bench, rig.recorder)


def identify_bench(bench: Bench) -> Identification:
    """Open ``bench`` (a :class:`harness.bench.config.Bench`), take its identification, close it.

    The bench is built as a scenario's (:meth:`Rig.build`, no players and no random crowd), then run until
    the server's end of every line whose dialect carries identities has sent its HELLO (at most
    :data:`HELLO_WAIT_S` of bench time; a line still silent then is named in ``extra["device_lines"]``).

    Raises:
        BenchError: the bench file's ``identify.files`` name no file; an adapter that does not load (InputError).
        AdapterError: the server cannot be started or reached (the message names the bench), or its identify()
            failed.
    """
    lab_components(bench)  # a bad entry fails before any server starts
    try:
        rig = Rig.build(bench, {}, crowd=0)
    except AdapterError as exc:
        raise AdapterError(
            exc.code, f"bench {bench.name}: cannot open it to identify the system: {exc.message}"
        ) from None
    with rig:
        wanted = [line for line in bench.lines if line.dialect.capabilities.identities]
        with contextlib.suppress(BenchTimeout):  # the lines still silent are named in the identification
            rig.run_until(
                lambda: len(device_components(bench, rig.recorder)[0]) >= len(wanted),
                "the server's HELLO on every line",
                HELLO_WAIT_S,
            )
        return identify_rig(rig)


# --- what the kit takes itself ----------------------------------------------------------------------------------


def device_components(bench: Bench, recorder: TraceRecorder) -> tuple[list[Component], str]:
    """``device:<line>`` for each of ``bench``'s lines whose dialect declares identities and whose server end sent a
    HELLO in ``recorder`` (what the bench's device end read): the digest of ``id=... proto=... fw=...``, that text
    as the detail; and one line saying which lines gave none and why (empty when every line gave one)."""
    received: dict[str, bytearray] = {}
    for record in recorder.records:
        if record.dir == "rx":
            received.setdefault(record.port, bytearray()).extend(record.data)
    found: list[Component] = []
    silent: list[str] = []
    undeclared: list[str] = []
    for line in bench.lines:
        if not line.dialect.capabilities.identities:
            undeclared.append(line.name)
            continue
        hello = _server_hello(line.dialect.codec().decoder(), bytes(received.get(line.trace_name, b"")))
        if hello is None:
            silent.append(line.name)
            continue
        text = f"id={hello.id} proto={hello.proto} fw={hello.fw}"
        found.append(Component(f"device:{line.name}", sha256_bytes(text.encode("utf-8")), "device", text))
    said = []
    if silent:
        said.append(f"no HELLO from the server's end of {', '.join(silent)}")
    if undeclared:
        said.append(f"dialect declares no identities on {', '.join(undeclared)}")
    return found, "; ".join(said)


def _server_hello(decoder: Any, data: bytes) -> Hello | None:
    """The first HELLO from the server's end in ``data``, decoded in the line's dialect."""
    for item in decoder.feed(data) if data else []:
        if not isinstance(item, BadFrame) and isinstance(item.message, Hello) and item.src is Source.SERVER:
            return item.message
    return None


def lab_components(bench: Bench) -> list[Component]:
    """``lab:<path>`` for every file the bench file's ``identify.files`` entries match (paths or globs relative to
    the bench file's folder, or absolute; directories skipped), each the SHA-256 of its bytes; ``<path>`` as
    matched (relative to the bench file's folder, ``/`` separators). Sorted by name, each file once.

    Raises:
        BenchError: an entry that matches no file, naming ``identify.files[i]``; a file that cannot be read.
    """
    base = bench.path.parent
    found: dict[str, Path] = {}
    for i, entry in enumerate(bench.identify_files):
        where = f"{bench.path.name}: identify.files[{i}]"
        matched = sorted(glob.glob(entry, root_dir=base, recursive=True))
        files = [m for m in matched if (base / m).is_file()]
        if not files:
            raise BenchError(f"{where}: {entry!r} matches no file (relative to {base})")
        for match in files:
            shown = Path(os.path.normpath(match)).as_posix()
            found.setdefault(f"lab:{shown}", base / match)
    out = []
    for name, path in sorted(found.items()):
        try:
            digest = sha256_file(path)
        except OSError as exc:
            raise BenchError(f"{bench.path.name}: identify.files: cannot read {path}: {exc.strerror}") from None
        out.append(Component(name, digest, "lab"))
    return out


# --- comparing two --------------------------------------------------------------------------------------------


def identity_changes(before: Identification, after: Identification) -> list[str]:
    """One line per difference (name, version, build; each component changed, added or removed), empty if none."""
    out = []
    if before.identified != after.identified:
        shown = {True: "identified", False: "not identified"}
        out.append(
            f"identified: {shown[before.identified]} -> {shown[after.identified]}"
            + (f" ({after.note or before.note})" if after.note or before.note else "")
        )
    for key in ("name", "version", "build"):
        was, now = getattr(before, key), getattr(after, key)
        if was != now:
            out.append(f"{key}: {was} -> {now}")
    old = {c.name: c for c in before.components}
    new = {c.name: c for c in after.components}
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is not None and b is not None and a.digest != b.digest:
            out.append(f"changed {name} ({b.source}): {a.digest} -> {b.digest}" + _details(a, b))
        elif a is None and b is not None:
            out.append(f"added {name} ({b.source}): {b.digest}" + (f" ({b.detail})" if b.detail else ""))
        elif a is not None and b is None:
            out.append(f"removed {name} ({a.source}): {a.digest}" + (f" ({a.detail})" if a.detail else ""))
    return out


def _details(a: Component, b: Component) -> str:
    return f" ({a.detail} -> {b.detail})" if a.detail or b.detail else ""
