"""A seeded SimPy model of the Xoc Dia table: tokens, shaker and bowl, dealer, players and their networks.

Pure: it opens no files, sockets or serial ports and reads no wall clock. Everything it knows is emitted as
ground-truth events (:mod:`simulator.events`). Entry points: :class:`Table`, :func:`profile_from_mapping`,
:meth:`Script.from_data`, all from already-parsed documents; the harness reads the files
(:func:`harness.files.load_profile`, :func:`harness.files.load_script`).
"""

from simulator.bets import BET_TYPES, BetType
from simulator.errors import InputError, XocdiaError
from simulator.eventlog import EventLog, Record, read_jsonl
from simulator.events import Event, RoundEnded, RoundStatus
from simulator.lamp import Lamp, LampSignal, LampState
from simulator.profile import Profile, ProfileError, profile_from_mapping
from simulator.script import Script, ScriptError
from simulator.table import Table

__all__ = [
    "BET_TYPES",
    "BetType",
    "Event",
    "EventLog",
    "InputError",
    "Lamp",
    "LampSignal",
    "LampState",
    "Profile",
    "ProfileError",
    "Record",
    "RoundEnded",
    "RoundStatus",
    "Script",
    "ScriptError",
    "Table",
    "XocdiaError",
    "profile_from_mapping",
    "read_jsonl",
]
