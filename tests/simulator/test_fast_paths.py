"""The model's fast paths give exactly what the plain paths give: generated event constructors, samplers that pop
the stream buffers inline, round blocks fetched many rounds at a time, and distributions sampled as arrays."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest

from harness.files import load_profile
from simulator import Table
from simulator.distributions import Exponential, Fixed, LogNormal, Uniform
from simulator.events import EVENT_TYPES, BetSent, DropItem
from simulator.fastinit import install_fast_init
from simulator.incidents import LiftFacts, RandomIncidents, RoundPlan, ShakeFacts
from simulator.profile import profile_from_mapping
from simulator.rng import _FETCH_ROUNDS, RoundBlocks, RoundStream, Stream, Streams, Subsystem
from tests.simulator.sim_helpers import shipped


def _next_block(blocks: RoundBlocks) -> list[float]:
    buffer, start, end = blocks.take_span()
    return buffer[start:end]


def _generator(seed: int, *key: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed, spawn_key=key)))


def _sample_args(cls: type) -> list[object]:
    """One distinct value per field, chosen by field position (no value is repeated)."""
    return [f"value-{i}" for i, _ in enumerate(dataclasses.fields(cls))]


@pytest.mark.parametrize("cls", [*EVENT_TYPES, RoundPlan, ShakeFacts, LiftFacts], ids=lambda c: c.__name__)
def test_generated_init_sets_every_field_by_position_and_by_keyword(cls: type) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    values = _sample_args(cls)
    by_position = cls(*values)
    by_keyword = cls(**dict(zip(names, values, strict=True)))
    assert [getattr(by_position, n) for n in names] == values
    assert by_position == by_keyword
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(by_position, names[0], "changed")
    with pytest.raises(TypeError):
        cls(*values[:-1])  # a missing argument is still an error


def test_bet_sent_built_by_hand_reads_back_its_fields() -> None:
    bet = BetSent(1.5, 3, "p01.1", "p01.1-2", "big", 500, 1.56)  # type: ignore[arg-type]
    assert (bet.t, bet.round, bet.player, bet.bet_id, bet.bet, bet.stake, bet.arrives) == (
        1.5,
        3,
        "p01.1",
        "p01.1-2",
        "big",
        500,
        1.56,
    )
    assert bet.to_dict()["kind"] == "bet_sent"


def test_install_fast_init_refuses_classes_it_cannot_reproduce() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithDefault:
        x: int = 1

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    for cls in (Mutable, WithDefault, NoSlots):
        with pytest.raises(TypeError, match=cls.__qualname__):
            install_fast_init(cls)


def _pop_or_draw(buffer: list[float], draw: Callable[[], float]) -> float:
    return buffer.pop() if buffer else draw()


@pytest.mark.parametrize("kind", ["stream", "round_stream"])
def test_buffer_pops_give_the_same_values_as_the_draw_methods(kind: str) -> None:
    def make() -> Stream:
        streams = Streams(11)
        if kind == "stream":
            return streams.stream(Subsystem.PLAYER, 2)
        stream = RoundStream(streams, Subsystem.DEALER, 0, uniforms=5, normals=3)
        stream.start_round(1)
        return stream

    plain, fast = make(), make()
    us, u, ns, n = fast.buffers()
    # 1,300 uniforms and 650 normals interleaved: crosses the 512-value refills (and, for the round stream, the
    # round budget into the overflow stream).
    expected = [(plain.random(), plain.random(), plain.normal()) for _ in range(650)]
    got = [(_pop_or_draw(us, u), _pop_or_draw(us, u), _pop_or_draw(ns, n)) for _ in range(650)]
    assert got == expected


def test_round_stream_keeps_its_buffers_across_rounds() -> None:
    stream = RoundStream(Streams(3), Subsystem.DEALER, 0, uniforms=4, normals=2)
    us, _, ns, _ = stream.buffers()
    uniform_gen = _generator(3, int(Subsystem.DEALER), 0)
    normal_gen = _generator(3, int(Subsystem.DEALER), 0, 2)
    for round_no in range(1, _FETCH_ROUNDS + 3):  # across a refetch
        stream.start_round(round_no)
        uniforms, normals = uniform_gen.random(4).tolist(), normal_gen.standard_normal(2).tolist()
        assert stream.buffers()[0] is us and stream.buffers()[2] is ns
        assert [us.pop() for _ in range(4)] == uniforms[::-1]
        assert [ns.pop() for _ in range(2)] == normals[::-1]


def test_a_round_that_needs_more_than_its_budget_continues_on_its_own_overflow_stream() -> None:
    stream = RoundStream(Streams(3), Subsystem.DEALER, 0, uniforms=2, normals=1)
    stream.start_round(5)
    budget = [stream.random(), stream.random()]
    overflow = _generator(3, int(Subsystem.DEALER), 0, 1, 5)
    assert budget == _generator(3, int(Subsystem.DEALER), 0).random(2).tolist()[::-1]
    assert [stream.random() for _ in range(3)] == overflow.random(512).tolist()[:3]


@pytest.mark.parametrize(
    "dist",
    [Fixed(2.0), Uniform(1.0, 3.0), Exponential(3.0), LogNormal(0.06, 0.5)],
    ids=lambda d: type(d).__name__,
)
def test_bound_samplers_draw_what_sample_draws(dist: Fixed | Uniform | Exponential | LogNormal) -> None:
    plain, fast = Streams(5).stream(Subsystem.PLAYER, 0), Streams(5).stream(Subsystem.PLAYER, 0)
    bound = dist.bind(fast)
    assert [bound() for _ in range(1200)] == [dist.sample(plain) for _ in range(1200)]


def test_round_blocks_fetched_together_equal_blocks_drawn_one_by_one() -> None:
    blocks = Streams(9).stream(Subsystem.TOKENS).round_blocks(26)
    gen = _generator(9, int(Subsystem.TOKENS), 0)
    for _ in range(_FETCH_ROUNDS * 2 + 3):  # across two refetches
        assert _next_block(blocks) == gen.random(26).tolist()


def test_normal_blocks_fetched_together_equal_blocks_drawn_one_by_one() -> None:
    blocks = RoundBlocks(_generator(4, 1).standard_normal, 7)
    gen = _generator(4, 1)
    for _ in range(_FETCH_ROUNDS + 5):
        assert _next_block(blocks) == gen.standard_normal(7).tolist()


@pytest.mark.parametrize(
    "dist",
    [Fixed(2.0), Uniform(1.0, 3.0), Exponential(3.0), LogNormal(0.06, 0.5)],
    ids=lambda d: type(d).__name__,
)
def test_vector_sampling_maps_each_variate_as_the_scalar_formula_does(
    dist: Fixed | Uniform | Exponential | LogNormal,
) -> None:
    """``vector`` is the scalar definition applied element by element to the variate the distribution declares: a
    uniform for Uniform and Exponential (inverse transform), a normal for LogNormal, nothing for Fixed."""
    expected, variate = {
        Fixed: (lambda x: 2.0, "none"),
        Uniform: (lambda x: 1.0 + 2.0 * x, "uniform"),
        Exponential: (lambda x: -3.0 * math.log(1.0 - x), "uniform"),
        LogNormal: (lambda x: 0.06 * math.exp(0.5 * x), "normal"),
    }[type(dist)]
    assert dist.variate == variate
    gen = _generator(12)
    variates = gen.standard_normal(300) if variate == "normal" else gen.random(300)
    got = dist.vector(variates)
    assert got.shape == variates.shape
    for value, x in zip(got.tolist(), variates.tolist(), strict=True):
        assert value == pytest.approx(expected(x), rel=1e-12)


def _shake_by_the_rules(draws: list[float], p_red: tuple[float, ...], p_standing: float, p_fall: float) -> str:
    """Faces of one shake from its 13 token draws, token by token as docs/profiles.md states them: a token stands
    if its second draw is under p_standing, else shows red if its first is under its p_red."""
    faces = ""
    for token, red in enumerate(p_red):
        face_u, stand_u, _ = draws[3 * token : 3 * token + 3]
        faces += "S" if stand_u < p_standing else ("R" if face_u < red else "W")
    return faces


def test_the_written_out_shake_decides_as_the_token_by_token_rules() -> None:
    profile = profile_from_mapping(
        {**shipped("chaotic"), "tokens": {**shipped("chaotic")["tokens"], "p_red": [0.2, 0.4, 0.6, 0.8]}}
    )
    incidents = RandomIncidents(profile, Streams(5))
    tokens = Streams(5).stream(Subsystem.TOKENS).round_blocks(26)  # the same generator, read alongside
    tk = profile.tokens
    seen_faces, seen_falls = set(), set()
    for round_no in range(1, 3000):
        block = _next_block(tokens)
        facts = incidents.shake(round_no, 1)
        assert facts.faces == _shake_by_the_rules(block[:13], tk.p_red, tk.p_standing, tk.p_fall)
        assert facts.overlap == (block[12] < tk.p_overlap)
        falls = [i for i in range(4) if block[3 * i + 2] < tk.p_fall]
        if facts.drop is DropItem.TOKEN:
            assert facts.drop_token == falls[0]  # the first token that fell
            seen_falls.add(facts.drop_token)
        elif facts.drop is None:
            assert not falls
        seen_faces.update(facts.faces)
    assert seen_faces == {"R", "W", "S"} and seen_falls == {0, 1, 2, 3}


def test_planned_bets_share_one_callbacks_list_that_stays_unchanged() -> None:
    tables = [Table(load_profile("standard"), seed=s, players=4) for s in (1, 2)]
    for table in tables:
        table.run(50)
    first, second = (t.crowd for t in tables)
    assert first._planned is not second._planned  # one class per crowd, each with its own environment
    for table in tables:
        planned = table.crowd._planned
        assert planned.env is table.env
        assert planned.callbacks == [table.crowd._deliver]  # still exactly the crowd's delivery, after 50 rounds
    assert sum(1 for e in tables[0].log if isinstance(e, BetSent)) > 50
