"""A generated block inside a hand-written document: the lines between a begin and an end marker line, which a
catalogue module (the fault kinds, the table configuration) rewrites from its own entries."""

from __future__ import annotations


def replace_block(text: str, begin: str, end: str, block: str, where: str) -> str:
    """``text`` with the lines between its ``begin`` and ``end`` marker lines replaced by ``block``, set off by a
    blank line on each side; the marker lines stay.

    Raises:
        ValueError: ``text`` lacks either marker line, or has them out of order (``where`` names the document and
            the block).
    """
    lines = text.split("\n")
    try:
        start, stop = lines.index(begin), lines.index(end)
    except ValueError:
        raise ValueError(f"{where}: no {begin!r} ... {end!r} block") from None
    if stop < start:
        raise ValueError(f"{where}: {end!r} comes before {begin!r}")
    return "\n".join([*lines[: start + 1], "", block, "", *lines[stop:]])
