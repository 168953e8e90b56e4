"""Config validation: every error names the field and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gameserver.config import ConfigError, Principal, load_config, parse_config


def test_valid_config() -> None:
    cfg = parse_config(
        {
            "engine": {"betting_s": 5, "auto_open": False, "chip_unit": 50, "min_stake": 50},
            "players": [{"id": "alice", "token": "alice-token", "balance": 500}],
            "supervisors": [{"id": "boss", "token": "boss-token"}],
            "devices": {"lamp": "loop://"},
        }
    )
    assert cfg.engine.betting_s == 5 and cfg.engine.auto_open is False and cfg.engine.chip_unit == 50
    assert cfg.wallets == {"alice": 500}
    assert cfg.tokens == {
        "alice-token": Principal("alice", "player"),
        "boss-token": Principal("boss", "supervisor"),
    }
    assert cfg.devices == {"lamp": "loop://"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([1, 2], "must be a mapping"),
        ({"colour": 1}, "unknown key colour"),
        ({"engine": {"betting": 5}}, "engine.betting: unknown key; allowed: betting_s"),
        ({"engine": {"auto_open": "yes"}}, "engine.auto_open: true or false"),
        ({"engine": {"reshake_cap": 2.5}}, "engine.reshake_cap: an integer"),
        ({"engine": {"betting_s": "long"}}, "engine.betting_s: a number"),
        ({"engine": {"chip_unit": 120}}, "chip_unit must be a positive multiple of 50"),
        ({"engine": {"max_stake": 50}}, "max_stake must be >= min_stake"),
        ({"engine": {"reorder_grace_s": -0.1}}, "engine: reorder_grace_s must be >= 0"),
        ({"engine": {"reorder_grace_s": "short"}}, "engine.reorder_grace_s: a number"),
        ({"players": [{"id": "a b", "token": "12345678"}]}, "players[0].id: 1-64 characters"),
        (
            {"players": [{"id": "a", "token": "12345678", "balance": -1}]},
            "players[0].balance: an integer >= 0",
        ),
        (
            {"players": [{"id": "a", "token": "12345678"}, {"id": "b", "token": "12345678"}]},
            "players[1].token: must be unique",
        ),
        ({"supervisors": "boss"}, "supervisors: must be a list"),
        ({"devices": {"bowl": 5}}, "devices.bowl: must be a pyserial URL string"),
        ({"heartbeat_timeout_s": 0}, "heartbeat_timeout_s: a number > 0"),
    ],
)
def test_bad_configs_name_the_field(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(raw)
    assert message in str(exc.value)


def test_unreadable_and_invalid_yaml_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("engine: [unclosed\n")
    with pytest.raises(ConfigError, match="is not valid YAML") as info:
        load_config(bad)
    # one line; the unclosed "[" runs into the end of the file, the start of line 2
    assert "\n" not in str(info.value) and str(info.value).endswith("at line 2, column 1")
