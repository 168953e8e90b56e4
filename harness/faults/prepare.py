"""Getting a bench and a table ready for a fault run: the safety check, the faultable adapter, the table script.

:func:`prepare_bench` refuses a bench whose file does not say ``faults_allowed: true`` (production or shared
targets must never be faulted) and swaps in the faultable adapter (:mod:`harness.faults.fault_adapters`) with the
run's fault seed. :func:`table_script` turns the planned table incidents into the simulator's script steps.
The run itself is :mod:`harness.faults.injector`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.bench.config import Bench
from harness.errors import Refused
from harness.faults.fault_adapters import faultable_adapter_path
from harness.faults.schedule_model import Fault, FaultKind

_TABLE_STEP = {
    FaultKind.TABLE_STANDING: "standing",
    FaultKind.TABLE_OVERLAP: "overlap",
    FaultKind.TABLE_TOUCH: "touch",
    FaultKind.TABLE_EARLY_LIFT: "early_lift",
    FaultKind.TABLE_NO_SHAKE: "forget_shake",
}


class InjectionRefused(Refused):
    """The bench or schedule may not be used for fault injection; the message says why."""


def table_script(faults: tuple[Fault, ...]) -> list[dict[str, Any]]:
    """The simulator script steps (``simulator.script``) that make the planned table incidents happen."""
    steps: list[dict[str, Any]] = []
    for f in faults:
        if f.kind == FaultKind.TABLE_DROP:
            steps.append({"round": f.at.round, "drop": f.item})
        elif f.kind == FaultKind.TABLE_STANDING:
            steps.append({"round": f.at.round, "standing": [f.token]})
        elif f.kind in _TABLE_STEP:
            steps.append({"round": f.at.round, _TABLE_STEP[f.kind]: True})
    return steps


def prepare_bench(bench: Bench, seed: int, adapter: str | None = None, serial: bool = True) -> Bench:
    """The bench with the faultable adapter (or ``adapter``), the fault seed and whether serial faults are
    planned (``serial``: the lines are wrapped only then) in its options: ``fault_seed`` and ``serial_faults``.
    The faultable in-process adapter reads both to wrap the server ends of its in-memory lines; on a bench whose
    server opens its own ends (local HIL, attached by URL) :meth:`harness.bench.rig.Rig.build` reads them to wrap
    the device ends instead.

    Raises:
        InjectionRefused: the bench is not marked ``faults_allowed: true``.
    """
    if not bench.faults_allowed:
        raise InjectionRefused(
            f"bench {bench.name!r} ({bench.path.name}) is not marked as a fault-injection target: set "
            "faults_allowed: true only on a non-production bench"
        )
    path = adapter or faultable_adapter_path(bench.server.adapter)
    options = {**bench.server.options, "fault_seed": seed, "serial_faults": serial}
    server = replace(bench.server, adapter=path, options=options)
    return replace(bench, server=server)
