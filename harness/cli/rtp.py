"""``xocdia-hil rtp``: the game's exact mathematics from the harness paytable (RTP-1), optionally checked by a
vectorised settlement simulation.

Text by default; ``--json`` prints one object: ``bets`` (per bet type: ``rtp`` as an exact decimal string and
as a fraction, ``rtp_decided``, ``win``/``push``/``lose`` probabilities as exact decimal strings, ``sigma``,
``volatility_index`` at 90/95/99 %, ``rounds_to_verify``), ``max_rtp``, ``bias_curve`` and
``break_even_p_red``, plus ``simulation`` when ``--simulate`` is given.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import Any

from harness.cli.common import non_negative_int, positive_int
from harness.stats.exact import Z_TWO_SIDED, all_bets, break_even_p_red, exact_decimal, max_rtp
from harness.stats.settlement import simulate
from simulator.bets import BetType

BIAS_POINTS = tuple(Fraction(p, 1000) for p in (490, 495, 500, 505, 510, 520))
CURVE_BETS = (BetType.BIG, BetType.SMALL, BetType.ODD, BetType.FOUR_RED)


def probability(text: str) -> Fraction:
    """argparse type: an exact decimal or fraction strictly between 0 and 1 (``0.505``, ``101/200``)."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a probability like 0.505 or 101/200, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a probability strictly between 0 and 1, got {text}")
    return value


def tolerance(text: str) -> Fraction:
    """argparse type: a positive RTP tolerance (``0.001`` = 0.1 percentage point)."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a positive number like 0.001, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a tolerance > 0, got {text}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rtp", help="exact RTP, variance and volatility of every bet (RTP-1)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--p-red", type=probability, default=Fraction(1, 2), help="P(red) per token (default 0.5)")
    p.add_argument("--tolerance", type=tolerance, default=Fraction(1, 1000), help="RTP tolerance (default 0.001)")
    p.add_argument(
        "--confidence",
        type=int,
        choices=sorted(Z_TWO_SIDED),
        default=99,
        help="for rounds-to-verify (default 99)",
    )
    p.add_argument("--simulate", type=positive_int, metavar="ROUNDS", help="also settle ROUNDS simulated rounds")
    p.add_argument("--seed", type=non_negative_int, default=0, help="simulation seed (default 0)")
    p.add_argument("--workers", type=positive_int, default=1, help="simulation processes (default 1)")
    p.set_defaults(func=run)


def report(p_red: Fraction, tol: Fraction, confidence: int) -> dict[str, Any]:
    """The JSON-ready figures for ``p_red``."""
    best, best_bets = max_rtp(p_red)
    return {
        "p_red": exact_decimal(p_red),
        "tolerance": exact_decimal(tol),
        "confidence": confidence,
        "bets": {
            m.bet.value: {
                "clause": m.clause,
                "odds": exact_decimal(m.odds),
                "rtp": exact_decimal(m.rtp),
                "rtp_fraction": str(m.rtp),
                "rtp_decided": exact_decimal(m.rtp_decided),
                "win": exact_decimal(m.win),
                "push": exact_decimal(m.push),
                "lose": exact_decimal(m.lose),
                "variance": exact_decimal(m.variance),
                "sigma": m.sigma,
                "volatility_index": {str(c): m.volatility_index(c) for c in sorted(Z_TWO_SIDED)},
                "rounds_to_verify": m.rounds_to_verify(tol, confidence),
            }
            for m in all_bets(p_red)
        },
        "max_rtp": {"rtp": exact_decimal(best), "bets": [b.value for b in best_bets]},
        "bias_curve": [
            {"p_red": exact_decimal(p), **{m.bet.value: exact_decimal(m.rtp) for m in all_bets(p)}} for p in BIAS_POINTS
        ],
        "break_even_p_red": {
            BetType.BIG.value: round(break_even_p_red(BetType.BIG), 9),
            BetType.SMALL.value: round(break_even_p_red(BetType.SMALL, Fraction(0), Fraction(1, 2)), 9),
        },
    }


def _simulation(args: argparse.Namespace) -> dict[str, Any]:
    result = simulate(
        args.simulate, args.seed, args.workers, None if args.p_red == Fraction(1, 2) else [args.p_red] * 4
    )
    sims = {}
    for m in all_bets(args.p_red):
        tot = result.totals[m.bet]
        sims[m.bet.value] = {"rtp": exact_decimal(tot.rtp), "z": round(tot.z_against(m.rtp, m.sigma), 3)}
    return {"rounds": result.rounds, "seed": args.seed, "red_counts": list(result.red_hist), "bets": sims}


def run(args: argparse.Namespace) -> int:
    data = report(args.p_red, args.tolerance, args.confidence)
    if args.simulate:
        data["simulation"] = _simulation(args)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(_text(data))
    return 0


def _pct(decimal_text: str) -> str:
    return f"{float(decimal_text.rstrip('…')) * 100:.4f} %"


def _text(data: dict[str, Any]) -> str:
    lines = [
        f"Exact mathematics, P(red) = {data['p_red']} per token (16 token patterns, exact fractions)",
        f"{'bet':<15}{'clause':<8}{'odds':>6}{'win':>10}{'push':>9}{'RTP':>11}{'decided':>11}{'sigma':>8}"
        f"{'VI99':>8}{'rounds':>12}",
    ]
    for name, b in data["bets"].items():
        lines.append(
            f"{name:<15}{b['clause']:<8}{b['odds']:>6}{float(b['win'].rstrip('…')):>10.6f}"
            f"{float(b['push'].rstrip('…')):>9.6f}{_pct(b['rtp']):>11}{_pct(b['rtp_decided']):>11}"
            f"{b['sigma']:>8.4f}{b['volatility_index']['99']:>8.3f}{b['rounds_to_verify']:>12,}"
        )
    best = data["max_rtp"]
    lines += [
        f"'rounds': bets to verify RTP within ±{data['tolerance']} at {data['confidence']} %.",
        f"RTP-1: maximum RTP {_pct(best['rtp'])} ({', '.join(best['bets'])}); pushes counted as returns.",
        "Bias curve (RTP by P(red)): "
        + "; ".join(f"{pt['p_red']}: big {_pct(pt['big'])}, small {_pct(pt['small'])}" for pt in data["bias_curve"]),
        f"Big passes 100 % at P(red) = {data['break_even_p_red']['big']:.6f}; "
        f"Small at {data['break_even_p_red']['small']:.6f}.",
    ]
    if "simulation" in data:
        sim = data["simulation"]
        lines.append(f"Simulation: {sim['rounds']:,} rounds, seed {sim['seed']}, red counts {sim['red_counts']}")
        lines += [f"  {n:<15}{_pct(s['rtp']):>11}  z = {s['z']:+.2f}" for n, s in sim["bets"].items()]
    return "\n".join(lines)
