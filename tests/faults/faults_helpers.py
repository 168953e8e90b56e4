"""Helpers shared by the fault-injection tests (imported by bare module name, as the other test folders do)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.faults.schedule_model import Schedule
from harness.judge.history import Op

Make = Callable[..., Schedule]


def bet_ops(history: Sequence[Op], player: str | None = None, type_: str | None = None) -> list[Op]:
    """The bet completions (not invokes) of ``player`` (any when None) of type ``type_`` (any when None)."""
    return [
        op
        for op in history
        if op.f == "bet" and op.type != "invoke" and (player is None or op.process == player)
        and (type_ is None or op.type == type_)
    ]  # fmt: skip


def fault_window(history: Sequence[Op], kind: str) -> tuple[float, float]:
    """(start, heal) bench times of the first fault of ``kind`` in the history."""
    start = next(op.t for op in history if op.f == "fault" and op.detail.startswith(kind))
    end = next(op.t for op in history if op.f == "heal" and op.detail.startswith(kind))
    return start, end


def fault(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, **fields}
