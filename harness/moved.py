"""Import paths that moved, kept working for labs' code: each old dotted path below still imports, as a module that
holds the same objects as its new home(s), and warns once with a :class:`DeprecationWarning` that names the new
path. The lab-facing API is :mod:`harness.lab`; the paths here are what lab code written against earlier layouts
imports.

Guarantees: an old path's module exposes every public name of its new modules (the same objects, so ``isinstance``
and identity hold); importing it never imports anything else; a path not in :data:`MOVED` is never touched.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Mapping, Sequence

#: Old dotted path -> the modules that now hold its names (first is the one a warning names).
MOVED: Mapping[str, tuple[str, ...]] = {
    "harness.adapters": ("harness.bench.adapters",),
    "harness.adapters.base": ("harness.bench.adapters.base",),
    "harness.adapters.loader": ("harness.bench.adapters.loader",),
    "harness.adapters.reference_http_adapter": ("harness.bench.adapters.reference_http",),
    "harness.adapters.reference_inprocess_adapter": ("harness.bench.adapters.reference_inprocess",),
    "harness.wire.protocol": ("harness.wire.text",),
    "harness.wire.protocol.messages": ("harness.wire.messages",),
    "harness.wire.protocol.codec": ("harness.wire.text", "harness.wire.frame_errors"),
    "harness.wire.protocol.envelope": ("harness.wire.text.envelope", "harness.wire.frame_errors"),
    "harness.wire.protocol.decoder": ("harness.wire.text.decoder",),
    "harness.wire.protocol.encoder": ("harness.wire.text.encoder",),
    "harness.wire.protocol.fields": ("harness.wire.text.fields",),
    "harness.wire.protocol.known_frames": ("harness.wire.text.known_frames",),
    "harness.wire.protocol.link": ("harness.wire.link", "harness.wire.line_events"),
    "harness.wire.dialects.ascii_v1": ("harness.wire.dialects.ascii", "harness.wire.dialects.ascii.dialect"),
    "harness.wire.dialects.bus_catalogue": ("harness.wire.dialects.bus.catalogue",),
    "harness.wire.dialects.bus_codec": (
        "harness.wire.dialects.bus.codec",
        "harness.wire.dialects.bus.catalogue",
        "harness.wire.dialects.bus.decode",
        "harness.wire.dialects.bus.encode",
        "harness.wire.dialects.bus.framer",
    ),
    "harness.wire.dialects.bus_decode": ("harness.wire.dialects.bus.decode",),
    "harness.wire.dialects.bus_encode": ("harness.wire.dialects.bus.encode",),
    "harness.wire.dialects.bus_framer": ("harness.wire.dialects.bus.framer",),
    "harness.wire.dialects.bus_devices": ("harness.wire.dialects.bus.devices",),
    "harness.wire.dialects.bus_master": ("harness.wire.dialects.bus.master",),
    "harness.wire.dialects.bus_ends": (
        "harness.wire.dialects.bus.devices",
        "harness.wire.dialects.bus.master",
        "harness.wire.dialects.bus.catalogue",
    ),
    "harness.wire.dialects.jsonl_codec": ("harness.wire.dialects.jsonl.codec",),
    "harness.wire.dialects.jsonl_ends": ("harness.wire.dialects.jsonl.ends",),
}


def _public(module: types.ModuleType) -> dict[str, object]:
    names: Sequence[str] = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return {n: getattr(module, n) for n in names}


class _Alias(importlib.abc.Loader):
    """Builds an old path's module from its new homes, and warns."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        targets = MOVED[spec.name]
        module = types.ModuleType(spec.name, f"Moved: import {targets[0]} instead.")
        for target in reversed(targets):
            vars(module).update(_public(importlib.import_module(target)))
        return module  # an old package gets its __path__ from the spec: its moved submodules come through here too

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__][0]
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename.startswith(("<frozen", __file__)):
            frame = frame.f_back  # the import statement that named the old path
        warnings.warn_explicit(
            f"{module.__name__} has moved: import {new} (or harness.lab)",
            DeprecationWarning,
            frame.f_code.co_filename,
            frame.f_lineno,
            module=frame.f_globals.get("__name__", "?"),
            registry=frame.f_globals.setdefault("__warningregistry__", {}),
        )


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds only the old paths of :data:`MOVED`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, _Alias(), is_package=any(o.startswith(fullname + ".") for o in MOVED)
        )


def install() -> None:
    """Put the finder first on :data:`sys.meta_path`, once."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
