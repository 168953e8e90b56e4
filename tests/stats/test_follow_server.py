"""``audit --follow URL``: the live monitor follows a real ``xocdia-server`` process whose rounds settle on real
ptys as the test watches, reading only the rounds that ended since its last read (``?after=N``).

The dealer settles rounds on seeded faces, so the settled sequence the server records is known: the biased
table's alarm round is the vectorised monitor's (``first_alarms``) over the same faces, and the fair table's
30 rounds cannot alarm (the monitor's false-alarm bound is 0.04 % over a whole record, and 30 rounds are far
below any boundary: |S| <= 60 needs more than 4.4 sigma there).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from harness.stats.fairness import monitor_design
from harness.stats.follow import ServerOutcomes, SourceUnavailable
from harness.stats.monitor import first_alarms
from harness.stats.readers import OUTCOME_COLUMNS, RecordError
from tests.stats.live_table import live_table
from tests.stats.stats_helpers import audit_follow, faces_of
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN

PLAYER_TOKEN = PLAYERS["alice"][0]


def test_follow_of_a_biased_live_table_alarms_while_it_plays(tmp_path: Path) -> None:
    # P(red) 0.9 per token, seed 2: the monitor's boundary is first crossed at a settled round well under 120
    with live_table(tmp_path, rounds=120, p_red=0.9, seed=2) as (server, dealer):
        url = f"http://{server.host}:{server.port}"
        got = audit_follow(url, "--token", PLAYER_TOKEN, "--interval", "0.3", "--idle", "60", "--status", "1")
        played = dealer.settled
        assert dealer.error is None, dealer.error
    reds = np.bitwise_count(np.array(dealer.patterns, dtype=np.uint8)).astype(np.int64)
    want = int(first_alarms(reds.reshape(1, -1), monitor_design())[0])
    assert got.returncode == 1, got.stdout + got.stderr
    lines = got.stdout.strip().splitlines()
    assert lines[0].startswith(f"following {url}/v1/outcomes.csv: live monitor")
    alarm = next(line for line in lines if line.startswith("ALARM at settled round "))
    assert int(alarm.split()[4]) == want and "tokens favour red" in alarm, alarm
    assert played < 120, f"the alarm came after the table stopped: {played} rounds played"
    assert lines[-1].startswith("FAIL: the live monitor's p-value reached its alarm level")


def test_follow_of_a_fair_live_table_reads_each_round_once_and_audits_them(tmp_path: Path) -> None:
    with live_table(tmp_path, rounds=30, p_red=0.5, seed=5) as (server, dealer):
        url = f"http://{server.host}:{server.port}/v1/outcomes.csv"
        source = ServerOutcomes(url, PLAYER_TOKEN)
        seen: list[str] = []
        while dealer.settled < 30 and dealer.error is None:
            seen += [r.round_id for r in source.poll()]
            time.sleep(0.3)
        dealer.join(timeout=30)
        time.sleep(0.5)
        seen += [r.round_id for r in source.poll()]
        _, full = server.call("GET", "/v1/outcomes.csv", SUPERVISOR_TOKEN)
        got = audit_follow(url, "--token", PLAYER_TOKEN, "--max-rounds", "25", "--idle", "30")
    assert dealer.error is None, dealer.error
    ended = [line.split(",")[0] for line in str(full).splitlines()[1:] if ",in_progress," not in line]
    # every ended round read exactly once, in order, though the follower polled many times during play
    assert seen == ended and len(seen) >= 30 and source.requests > 5
    # O(new rows) over the wire: all the polls together read about one copy of the file, not one per poll
    assert source.bytes_read < len(str(full)) + 120 * source.requests
    assert got.returncode == 3, got.stdout + got.stderr  # 25 rounds: no alarm, INSUFFICIENT
    out = got.stdout.strip().splitlines()
    assert "no alarm over" in out[1] and "25 rounds read (--max-rounds): full audit of the 25 rounds read" in out[1]
    assert out[2].startswith(f"Audit of {url} (outcomes): 25 rounds")
    assert out[-1].startswith("INSUFFICIENT: ")


def test_the_server_answers_after_with_the_later_rounds_only(tmp_path: Path) -> None:
    with live_table(tmp_path, rounds=4, p_red=0.5, seed=3) as (server, dealer):
        dealer.join(timeout=60)
        assert dealer.error is None and dealer.settled == 4
        _, full = server.call("GET", "/v1/outcomes.csv", PLAYER_TOKEN)
        _, later = server.call("GET", "/v1/outcomes.csv?after=2", PLAYER_TOKEN)
        bad = server.call("GET", "/v1/outcomes.csv?after=-1", PLAYER_TOKEN)
    rows = str(full).splitlines()
    assert str(later).splitlines() == [rows[0]] + [r for r in rows[1:] if int(r.split(",")[0]) > 2]
    assert bad[0] == 422 and bad[1]["error"]["code"] == "invalid_field"


class _GrowingCsv(BaseHTTPRequestHandler):
    """A foreign server: serves a file as it is now, ignoring any query (no ``after=``)."""

    path_served: Path
    asked: list[str]

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        if not self.path.startswith("/export/"):
            self.send_error(404, "no such export")
            return
        body = self.path_served.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def foreign(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    served = tmp_path / "OUTCOMES.csv"
    asked: list[str] = []
    handler = type("Handler", (_GrowingCsv,), {"path_served": served, "asked": asked})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/export/OUTCOMES.csv", served, asked
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_server_that_ignores_after_is_still_read_from_where_the_follower_stopped(
    foreign: tuple[str, Path, list[str]],
) -> None:
    url, served, asked = foreign
    header = ",".join(OUTCOME_COLUMNS) + "\n"
    # round 3 still in progress, round 4 already ended: 3 and everything after it wait for the next read
    served.write_text(
        header + "1,settled,RRWW,2,0,1\n2,void,,,0,2\n3,in_progress,,,0,\n4,settled,RRRR,4,0,4\n", encoding="utf-8"
    )
    source = ServerOutcomes(url)
    assert [(r.round_id, r.reds) for r in source.poll()] == [("1", 2), ("2", None)]
    served.write_text(
        header + "1,settled,RRWW,2,0,1\n2,void,,,0,2\n3,settled,WWWW,0,0,3\n4,settled,RRRR,4,0,4\n", encoding="utf-8"
    )
    assert [(r.round_id, r.reds) for r in source.poll()] == [("3", 0), ("4", 4)]
    assert source.poll() == []
    assert asked == ["/export/OUTCOMES.csv", "/export/OUTCOMES.csv?after=2", "/export/OUTCOMES.csv?after=4"]


def test_round_ids_that_are_not_numbers_and_http_errors_are_named(foreign: tuple[str, Path, list[str]]) -> None:
    url, served, _ = foreign
    served.write_text(",".join(OUTCOME_COLUMNS) + "\n" + f"r1,settled,{faces_of(3)},2,0,1\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"OUTCOMES\.csv: line 2, column round_id: expected a whole number"):
        ServerOutcomes(url).poll()
    with pytest.raises(SourceUnavailable, match=r"HTTP 404"):
        ServerOutcomes(url.replace("/export/", "/none/")).poll()
    with pytest.raises(ValueError, match="not an http:// or https:// URL"):
        ServerOutcomes("ftp://example/OUTCOMES.csv")


def test_a_server_that_refuses_the_token_or_is_not_there_fails_with_a_clear_line(tmp_path: Path) -> None:
    with live_table(tmp_path, rounds=1, p_red=0.5, seed=1) as (server, _):
        refused = audit_follow(f"http://{server.host}:{server.port}", "--token", "no-such-token", timeout=60)
    assert refused.returncode == 2 and "HTTP 401" in refused.stderr, refused.stderr
    gone = audit_follow(f"http://{server.host}:{server.port}", timeout=60)  # the server has stopped
    assert gone.returncode == 2 and "cannot read" in gone.stderr, gone.stderr
