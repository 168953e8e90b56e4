"""The live page in a real browser (headless Chromium through Playwright): ``run --live`` on the in-process bench,
then ``replay --live`` of the file it recorded.

Needs the ``playwright`` package (the test extra) and a Chromium binary: Debian's ``chromium`` package
(``/usr/bin/chromium``, installed by ``.ci/run``) or the one ``XOCDIA_CHROMIUM`` names. Skipped, saying which is
missing, where neither is there.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.judge.planting import planted

BENCH = str(Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml")
CHROMIUM = os.environ.get("XOCDIA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ROUNDS = 8
VOID_ROUND = 3
STOP_S = 60  # how long a command may take to end after SIGTERM (its clean-up on a loaded machine)

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install chromium, or set XOCDIA_CHROMIUM)", allow_module_level=True
    )


def _start(
    args: list[str], banner: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start ``xocdia-hil ARGS`` (in ``cwd``, with ``env``); returns the process and the URL it printed after
    ``banner``. The process dumps its threads' stacks on SIGABRT (``PYTHONFAULTHANDLER``: :func:`_stop`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env={**(os.environ if env is None else env), "PYTHONFAULTHANDLER": "1"},
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith(banner):
            return proc, line.split()[2]
    proc.kill()
    raise AssertionError(f"xocdia-hil {' '.join(args)} printed no {banner!r}")


def _stop(proc: subprocess.Popen[str]) -> int:
    """SIGTERM, then the exit status. A process still there after STOP_S fails the test with its output and the
    stacks of its threads (SIGABRT, dumped by the fault handler :func:`_start` turned on)."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = "(no output: the process did not end on SIGABRT either)"
        what = f"still running {STOP_S} s after SIGTERM; its output, then its threads:\n{out[-6000:]}"
        raise AssertionError(what) from None
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _verdicts(page: Any) -> list[tuple[str, str, str]]:
    items = page.locator("#verdicts li")
    return sorted(
        (items.nth(i).get_attribute("data-round"), items.nth(i).get_attribute("data-ok"), items.nth(i).inner_text())
        for i in range(items.count())
    )


def test_live_page_then_replay_of_its_recording(browser: Any, tmp_path: Path) -> None:
    script = tmp_path / "touch.yaml"
    script.write_text(f"- {{round: {VOID_ROUND}, touch: true}}\n", encoding="utf-8")
    record = tmp_path / "run.jsonl"
    args = ["run", "--bench", BENCH, "--rounds", str(ROUNDS), "--players", "2", "--script", str(script)]
    args += ["--live", "127.0.0.1:0", "--record", str(record), "--pace", "3", "--hold"]
    proc, url = _start(args, "live page:")
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        sync_api.expect(page.locator("#mode")).to_have_text("LIVE")
        counter = page.locator("#round")
        sync_api.expect(counter).not_to_have_text("0", timeout=30_000)
        first = int(counter.inner_text())
        page.wait_for_function(f"() => Number(document.getElementById('round').textContent) > {first}", timeout=30_000)
        void = page.locator(f'#verdicts li[data-round="{VOID_ROUND}"]')
        sync_api.expect(void).to_have_attribute("data-clause", "SH-5", timeout=30_000)
        sync_api.expect(void).to_have_attribute("data-ok", "true")
        sync_api.expect(void).to_contain_text("void (SH-5)")
        sync_api.expect(page.locator("#final")).to_contain_text("oracle: PASS", timeout=60_000)
        sync_api.expect(page.locator(".lane")).to_have_count(5)
        live = _verdicts(page)
        assert len(live) == ROUNDS and not errors
    finally:
        assert _stop(proc) == 0  # SIGTERM while holding the page: a clean stop
    assert record.exists()

    proc, url = _start(["replay", str(record), "--live", "127.0.0.1:0", "--speed", "100"], "replay page:")
    try:
        page = browser.new_page()
        page.goto(url)
        sync_api.expect(page.locator("#mode")).to_have_text("REPLAY")
        sync_api.expect(page.locator("#final")).to_contain_text("oracle: PASS", timeout=60_000)
        assert _verdicts(page) == live
        page.locator("#slider").fill("0")  # back to the start: nothing judged yet
        sync_api.expect(page.locator("#verdicts li")).to_have_count(0)
        page.locator("#next-round").click()  # one round on
        sync_api.expect(page.locator("#verdicts li")).to_have_count(1)
        before = page.evaluate("() => S.events")
        page.locator("#step").click()  # one event on
        assert page.evaluate("() => S.events") == before + 1
    finally:
        _stop(proc)


SHOTS = Path(os.environ.get("XOCDIA_SCREENSHOTS", "")) if os.environ.get("XOCDIA_SCREENSHOTS") else None


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    """A screenshot into ``tmp_path`` (and into ``$XOCDIA_SCREENSHOTS``, e.g. docs/images, when set: reduced to 64
    colours, the page's flat colours and text intact, so that a docs image stays well under 150 KB)."""
    page.screenshot(path=str(tmp_path / name))
    if SHOTS is not None:
        from PIL import Image  # matplotlib's dependency

        with Image.open(tmp_path / name) as image:
            flat = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            flat.save(SHOTS / name, optimize=True)


def test_the_result_stays_drawn_and_a_hovered_row_stays_readable(browser: Any, tmp_path: Path) -> None:
    args = ["run", "--bench", BENCH, "--rounds", "8", "--players", "2", "--live", "127.0.0.1:0", "--pace", "1"]
    proc, url = _start([*args, "--hold"], "live page:")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        sync_api.expect(page.locator("#of")).to_have_text(" of 8", timeout=30_000)
        page.wait_for_function("() => document.getElementById('table').dataset.faces.length === 4", timeout=30_000)
        faces = page.get_attribute("#table", "data-faces")
        revealed = page.get_attribute("#table", "data-shown-round")
        page.locator('.lane[data-line="bowl"] li').first.hover()
        # the row under the pointer and its bytes, read once hovered (a row added meanwhile takes the first place)
        handle = page.locator("#lanes li:hover").element_handle()
        raw = handle.get_attribute("data-raw")
        where = handle.bounding_box()
        events = page.evaluate("() => S.events")
        page.wait_for_timeout(1000)
        # 1 s after the reveal at --pace 1: the next round's tokens are down, and the revealed faces still drawn
        # (or a later round's, when that one was revealed since: a newer result replaces an older one)
        # the drawing and the state read at one moment (the page's next frame drawn first)
        state = page.evaluate(
            "() => { dirty = true; render(); return [S.shown.round, S.shown.faces, S.shown.placed, S.faces,"
            " document.getElementById('table').dataset.faces,"
            ' [0, 1, 2, 3].map(i => document.querySelector(`#tokens circle[data-token="${i}"]`)'
            ".getAttribute('class'))]; }"
        )
        shown = state[4]
        assert len(shown) == 4 and shown == state[1]
        if str(state[0]) == revealed:
            assert shown == faces and state[2] and state[3] == ""  # the table has moved on; the result is still drawn
        assert state[5] == [f"token {f}" for f in shown]  # the tokens drawn, read at the same moment
        sync_api.expect(page.locator("#result")).to_contain_text(f"round {state[0]}: settled on {shown}")
        _shot(page, tmp_path, "live-mid-round.png")
        page.wait_for_timeout(2000)  # 3 s on the row in all, while the run goes on
        assert page.evaluate("() => S.events") > events
        assert handle.evaluate("e => e.isConnected")
        assert handle.bounding_box() == where  # neither the row nor the layout around it moved under the pointer
        sync_api.expect(page.locator("#raw-tip")).to_be_visible()
        assert page.get_attribute("#raw-tip", "data-raw") == raw and raw
        sync_api.expect(page.locator("#raw-tip")).to_contain_text(f"bytes: {raw}")
    finally:
        _stop(proc)


def test_a_fault_run_header_and_rows_agree(browser: Any, tmp_path: Path) -> None:
    record = tmp_path / "chaos.jsonl"
    args = ["inject", "--bench", BENCH, "--schedule", "chaos", "--seed", "7", "--manifest", str(tmp_path / "m.json")]
    proc, url = _start([*args, "--live", "127.0.0.1:0", "--record", str(record), "--hold"], "live page:")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        final = page.locator("#final")
        sync_api.expect(final).to_have_attribute("data-verdict", "pass", timeout=60_000)
        assert page.locator('#verdicts li[data-verdict="bad"]').count() == 0  # PASS over no failed row
        for n in (2, 3):  # the kills' cancelled rounds: expected, with their cause
            item = page.locator(f'#verdicts li[data-round="{n}"]')
            sync_api.expect(item).to_have_attribute("data-verdict", "expected")
            assert f"planned fault server_kill(server) at round {n}" in (item.get_attribute("data-cause") or "")
        assert page.get_attribute("#tally", "data-expected") == "2"
        sync_api.expect(page.locator("#of")).to_have_text(" of 12")
        _shot(page, tmp_path, "live-fault.png")
    finally:
        assert _stop(proc) == 0
    proc, url = _start(["replay", str(record), "--live", "127.0.0.1:0", "--speed", "100"], "replay page:")
    try:
        page = browser.new_page()
        page.goto(url)
        sync_api.expect(page.locator("#final")).to_have_attribute("data-verdict", "pass", timeout=60_000)
        heals = page.locator('#incidents li[data-kind="fault: heal"]')
        assert heals.count() == 8 and heals.first.is_visible()
        page.locator('#incident-kinds input[data-kind="fault: heal"]').uncheck()  # the filter by kind
        assert all(not heals.nth(i).is_visible() for i in range(heals.count()))
        assert page.locator('#incidents li[data-kind="fault: fault"]').first.is_visible()
        mark = page.locator('#timeline-bar span[data-kind="fault: fault"]').nth(1)  # the second kill
        t = float(mark.get_attribute("data-t") or "nan")
        mark.click()  # click-to-seek
        assert page.evaluate("() => S.t") == pytest.approx(t)
        judged = page.evaluate(f"() => replay.events.filter(e => e.kind === 'verdict' && e.t <= {t}).length")
        sync_api.expect(page.locator("#verdicts li")).to_have_count(judged)
        assert 0 < judged < 12
    finally:
        _stop(proc)


def _first_forged(record: Path) -> dict[str, dict[str, Any]]:
    """The first frame event of each ``forged`` kind in a feed file."""
    first: dict[str, dict[str, Any]] = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        how = event["data"].get("forged") if event["kind"] == "frame" else None
        if how and how not in first:
            first[how] = event
    return first


def test_frames_the_harness_forged_are_marked_with_their_bytes(browser: Any, tmp_path: Path) -> None:
    record = tmp_path / "forged.jsonl"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", BENCH, "--workers", "0", "--record", str(record)]
    cmd += ["--tags", "clause:DEV-1 or clause:DEV-2 or clause:DEV-3", "--report", str(tmp_path / "report")]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:]
    first = _first_forged(record)
    # DEV-1: a reader's result on another device's line; DEV-3: noise; DEV-2: a replayed result on the reader's line
    assert set(first) == {"frame", "noise", "queued"}
    assert first["frame"]["data"]["line"] != "reader" and first["frame"]["data"]["device"] == "READER"
    proc, url = _start(["replay", str(record), "--live", "127.0.0.1:0", "--speed", "1"], "replay page:")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        sync_api.expect(page.locator("#mode")).to_have_text("REPLAY")
        page.locator("#play").click()  # paused: the page shows what the slider says
        for how, badge in (("frame", "forged"), ("noise", "noise"), ("queued", "queued")):
            event = first[how]
            data = event["data"]
            page.locator("#slider").fill(f"{math.ceil(event['t'] * 100) / 100:.2f}")
            row = page.locator(f'.lane[data-line="{data["line"]}"] li', has_text=data["msg"])
            row = row.filter(has=page.locator(f"span.badge:text-is('{badge}')")).first
            sync_api.expect(row).to_be_visible()
            row.hover()
            tip = page.locator("#raw-tip")
            sync_api.expect(tip).to_be_visible()
            sync_api.expect(tip).to_contain_text(f"{badge}: ")
            assert data["raw"] and (tip.get_attribute("data-raw") or "") == data["raw"]
            if how == "frame":
                _shot(page, tmp_path, "live-forged.png")
            page.mouse.move(0, 0)
    finally:
        _stop(proc)


def test_a_failing_run_shows_its_failed_round_and_a_failing_header(browser: Any, tmp_path: Path) -> None:
    # a defect planted in the reference server: three reds paid 2.5 to 1 instead of 2.8 (PAY-2)
    root, _features = planted(tmp_path, "three-reds-pay-2-5")
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = ["run", "--bench", BENCH, "--rounds", "12", "--live", "127.0.0.1:0", "--hold"]
    proc, url = _start(args, "live page:", cwd=root, env=env)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        final = page.locator("#final")
        sync_api.expect(final).to_have_attribute("data-verdict", "fail", timeout=60_000)
        sync_api.expect(final).to_contain_text("FAIL")
        bad = page.locator('#verdicts li[data-verdict="bad"]')
        rounds_bad = page.locator('#verdicts li[data-verdict="bad"]:not([data-round="run"])')
        paid = rounds_bad.filter(has_text="[PAY-2]").first  # the round whose three-red bet was underpaid
        sync_api.expect(paid).to_contain_text("three_red 1000: expected 3800, server 3500")
        sync_api.expect(paid.locator(".mark")).to_have_text("✗")
        assert page.get_attribute("#tally", "data-bad") == str(bad.count())
        assert page.locator('#verdicts li[data-verdict="ok"]').count() == 12 - rounds_bad.count()
        _shot(page, tmp_path, "live-failure.png")
    finally:
        assert _stop(proc) == 1  # the failed run's exit status, after the page was held


def test_a_biased_table_trips_the_monitor_and_the_page_shows_the_alarm(browser: Any, tmp_path: Path) -> None:
    # the compressed profile with every token landing red 9 times in 10: the server plays it right (PASS), the
    # bias monitor alarms as the rounds end
    profile = (Path(BENCH).parents[1] / "profiles" / "compressed.yaml").read_text(encoding="utf-8")
    assert "  p_red: 0.5\n" in profile
    biased = tmp_path / "biased.yaml"
    biased.write_text(profile.replace("  p_red: 0.5\n", "  p_red: 0.9\n"), encoding="utf-8")
    record = tmp_path / "biased.jsonl"
    args = ["run", "--bench", BENCH, "--rounds", "80", "--profile", str(biased), "--record", str(record)]
    proc, url = _start([*args, "--live", "127.0.0.1:0", "--hold"], "live page:")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        alarm = page.locator("#alarm")
        sync_api.expect(alarm).to_be_visible(timeout=60_000)
        sync_api.expect(alarm).to_contain_text("bias alarm: favours red at round")
        sync_api.expect(alarm).to_have_attribute("data-count", "1")
        row = page.locator('#incidents li.alarm[data-kind="monitor alarm"]')
        sync_api.expect(row).to_have_count(1)
        sync_api.expect(row).to_contain_text("bias toward red after")
        sync_api.expect(page.locator('#timeline-bar span.alarm[data-kind="monitor alarm"]')).to_have_count(1)
        sync_api.expect(page.locator("#final")).to_have_attribute("data-verdict", "pass", timeout=60_000)
        _shot(page, tmp_path, "live-alarm.png")
    finally:
        assert _stop(proc) == 0
    # the alarm is on the record, after the round end that raised it
    events = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    at = next(i for i, e in enumerate(events) if e["kind"] == "note" and e["data"]["who"] == "monitor")
    before = events[at - 1]
    assert before["kind"] == "round" and before["data"]["state"] == "ended"
    assert before["data"]["round"] == events[at]["data"]["round"]
