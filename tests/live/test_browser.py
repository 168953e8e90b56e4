"""The live page in a real browser (headless Chromium through Playwright): ``run --live`` on the in-process bench,
then ``replay --live`` of the file it recorded.

Needs the ``playwright`` package (the test extra) and a Chromium binary: Debian's ``chromium`` package
(``/usr/bin/chromium``, installed by ``.ci/run``) or the one ``XOCDIA_CHROMIUM`` names. Skipped, saying which is
missing, where neither is there.
"""

from __future__ import annotations

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

BENCH = str(Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml")
CHROMIUM = os.environ.get("XOCDIA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ROUNDS = 8
VOID_ROUND = 3

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install chromium, or set XOCDIA_CHROMIUM)", allow_module_level=True
    )


def _start(args: list[str], banner: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``xocdia-hil ARGS``; returns the process and the URL it printed after ``banner``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=20)
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
