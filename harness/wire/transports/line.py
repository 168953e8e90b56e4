"""Serial line settings (:class:`LineSettings`): baud, data bits, parity, stop bits and an optional gap between
bytes, and the time each byte takes on the wire.

The formulas (asynchronous serial framing, one character at a time):

- bits on the wire per byte: ``bits_per_byte = 1 (start) + bytesize + (1 if parity != "N" else 0) + stopbits``;
  e.g. 8N1 = 10 bits, 7E1 = 10 bits, 8E2 = 12 bits, 5N1.5 = 7.5 bits;
- time of one byte: ``byte_time_s = bits_per_byte / baud`` (115200 8N1: 86.8 µs; 9600 8N1: 1.0417 ms);
- spacing of consecutive bytes: ``step_s = byte_time_s + inter_byte_gap_s`` (the gap is idle line, marking,
  between the stop bit of one byte and the start bit of the next);
- time of ``n`` bytes sent back to back: ``frame_time_s(n) = n * byte_time_s + (n - 1) * inter_byte_gap_s``
  (0 for n = 0); a 40-byte frame at 9600 8N1 takes 41.67 ms.

Parity letters as pyserial spells them: ``N`` none, ``E`` even, ``O`` odd, ``M`` mark, ``S`` space.
"""

from __future__ import annotations

from dataclasses import dataclass

PARITIES = ("N", "E", "O", "M", "S")
BYTESIZES = (5, 6, 7, 8)
STOPBITS = (1, 1.5, 2)
BAUD_RANGE = (50, 12_000_000)  # from the slowest teleprinter rate to a fast USB UART
GAP_RANGE = (0.0, 1.0)  # seconds of idle line between two bytes


class LineSettingsError(ValueError):
    """A line setting out of range. ``field`` names it, ``allowed`` says what is allowed, ``got`` is the value;
    the message reads ``line settings: FIELD: ALLOWED; got VALUE``."""

    def __init__(self, field: str, allowed: str, got: object) -> None:
        super().__init__(f"line settings: {field}: {allowed}; got {got!r}")
        self.field = field
        self.allowed = allowed
        self.got = got


@dataclass(frozen=True, slots=True)
class LineSettings:
    """One serial line's settings (default 115200 8N1, no gap). Raises :class:`LineSettingsError` naming a bad
    field and the allowed values."""

    baud: int = 115200
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    inter_byte_gap_s: float = 0.0

    def __post_init__(self) -> None:
        low, high = BAUD_RANGE
        if isinstance(self.baud, bool) or not isinstance(self.baud, int) or not low <= self.baud <= high:
            raise LineSettingsError("baud", f"must be a whole number of bits per second in [{low}, {high}]", self.baud)
        if isinstance(self.bytesize, bool) or self.bytesize not in BYTESIZES:
            raise LineSettingsError("bytesize", f"must be one of {', '.join(map(str, BYTESIZES))}", self.bytesize)
        if self.parity not in PARITIES:
            allowed = "must be one of N (none), E (even), O (odd), M (mark), S (space)"
            raise LineSettingsError("parity", allowed, self.parity)
        if isinstance(self.stopbits, bool) or self.stopbits not in STOPBITS:
            raise LineSettingsError("stopbits", "must be one of 1, 1.5, 2", self.stopbits)
        gap, (low_gap, high_gap) = self.inter_byte_gap_s, GAP_RANGE
        if isinstance(gap, bool) or not isinstance(gap, int | float) or not low_gap <= gap <= high_gap:
            raise LineSettingsError(
                "inter_byte_gap_s", f"must be a number of seconds in [{low_gap:g}, {high_gap:g}]", gap
            )

    @property
    def bits_per_byte(self) -> float:
        """1 start bit + data bits + 1 parity bit (none for ``N``) + stop bits."""
        return 1 + self.bytesize + (0 if self.parity == "N" else 1) + self.stopbits

    @property
    def byte_time_s(self) -> float:
        """Seconds one byte occupies the line: ``bits_per_byte / baud``."""
        return self.bits_per_byte / self.baud

    @property
    def step_s(self) -> float:
        """Seconds from one byte's start bit to the next one's when sent back to back: byte time + gap."""
        return self.byte_time_s + self.inter_byte_gap_s

    def frame_time_s(self, n: int) -> float:
        """Seconds ``n`` bytes sent back to back occupy the line: ``n * byte_time_s + (n - 1) * gap`` (0 for none)."""
        return 0.0 if n <= 0 else n * self.byte_time_s + (n - 1) * self.inter_byte_gap_s

    def describe(self) -> str:
        """The usual short form: ``115200 8N1``, ``9600 7E1.5``, plus the gap when there is one."""
        stop = f"{self.stopbits:g}"
        gap = f" gap {self.inter_byte_gap_s * 1000:g} ms" if self.inter_byte_gap_s else ""
        return f"{self.baud} {self.bytesize}{self.parity}{stop}{gap}"

    def pyserial(self) -> dict[str, int | float | str]:
        """The keyword arguments pyserial's ``serial_for_url`` takes for these settings."""
        stop: int | float = int(self.stopbits) if self.stopbits != 1.5 else 1.5
        return {"baudrate": self.baud, "bytesize": self.bytesize, "parity": self.parity, "stopbits": stop}

    @classmethod
    def from_pyserial(
        cls, baudrate: object, bytesize: object, parity: object, stopbits: object, inter_byte_gap_s: float = 0.0
    ) -> LineSettings:
        """Settings from a pyserial port's attributes (as an RFC 2217 client sets them). Raises
        LineSettingsError."""
        baud = int(baudrate) if isinstance(baudrate, float) and baudrate.is_integer() else baudrate
        return cls(baud, bytesize, parity, stopbits, inter_byte_gap_s)  # type: ignore[arg-type]


DEFAULT_LINE = LineSettings()
