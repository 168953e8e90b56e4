"""A seeded SimPy model of the Xoc Dia table: tokens, shaker and bowl, dealer, players and their networks.

Pure: no sockets, no serial, no wall clock. Everything it knows is emitted as ground-truth events
(:mod:`simulator.events`). Entry points: :class:`Table`, :func:`load_profile`, :class:`Script`.
"""

from simulator.bets import BET_TYPES, BetType
from simulator.eventlog import EventLog, Record, read_jsonl
from simulator.events import Event, RoundEnded, RoundStatus
from simulator.lamp import Lamp, LampSignal, LampState
from simulator.profile import Profile, ProfileError, available_profiles, load_profile
from simulator.script import Script, ScriptError
from simulator.table import Table

__all__ = [
    "BET_TYPES",
    "BetType",
    "Event",
    "EventLog",
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
    "available_profiles",
    "load_profile",
    "read_jsonl",
]
