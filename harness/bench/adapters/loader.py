"""Find an adapter class by dotted path (``package.module:ClassName``), as named in a bench file."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any

from harness.bench.adapters.base import GameServerAdapter
from harness.errors import InputError


def load_adapter(path: str, options: Mapping[str, Any]) -> GameServerAdapter:
    """Import ``package.module:ClassName`` and construct it with ``options``. The working folder is searched
    last, so a lab's adapter module beside its bench file (``lab_adapter:LabAdapter``, from ``xocdia-hil init``)
    loads without packaging, and never shadows an installed module.

    Raises:
        InputError: not of that form, the module or class does not exist, or the class does not implement
            :class:`GameServerAdapter` (the message names the path).
    """
    module_name, _, class_name = path.partition(":")
    if not module_name or not class_name:
        raise InputError(f"adapter {path!r}: expected 'package.module:ClassName'")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"adapter {path!r}: cannot import {module_name}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, GameServerAdapter)):
        raise InputError(f"adapter {path!r}: {class_name} is not a GameServerAdapter subclass in {module_name}")
    return cls(options)
