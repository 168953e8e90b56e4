"""Input hardening of the API, against a real server process over raw sockets and HTTP: tokens only in the
Authorization header, a body limit enforced while streaming, JSON depth limits, Content-Type and UTF-8 required,
405 with Allow — every refusal a 4xx with a code, nothing changed."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable

from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess

ALICE, BOSS = PLAYERS["alice"][0], SUPERVISOR_TOKEN
LONG = {"betting_s": 600, "round_gap_s": 0.2}
BET = {"client_bet_id": "h-1", "bet_type": "odd", "stake": 1000}


def rss_kb(server: ServerProcess) -> int:
    assert server.proc is not None
    with open(f"/proc/{server.proc.pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_tokens_in_the_url_are_refused_on_http(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    status, reply = server.call("GET", f"/v1/events?token={BOSS}")
    assert (status, reply["error"]["code"]) == (401, "token_in_url")
    status, reply = server.call("POST", f"/v1/bets?token={ALICE}", body=BET)
    assert (status, reply["error"]["code"]) == (401, "token_in_url")
    assert server.call("GET", "/v1/players/alice/bets", ALICE)[1]["bets"] == []
    status, reply = server.call("GET", f"/v1/events?token={BOSS}", BOSS)  # even beside a valid header
    assert (status, reply["error"]["code"]) == (401, "token_in_url")
    assert server.call("GET", "/v1/events", BOSS)[0] == 200  # the header works


def test_a_huge_body_is_refused_before_it_is_read(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    before = rss_kb(server)
    # Content-Length announced: 413 at once, without sending the body.
    status, reply = server.call("POST", "/v1/bets", ALICE, raw=b"x" * (16 * 1024 + 1))
    assert (status, reply["error"]["code"]) == (413, "body_too_large")
    # Chunked, no length: the server answers 413 after the first 16 KiB and 100 MB are never buffered.
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        head = (
            f"POST /v1/bets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALICE}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(head.encode())
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        sent, answer = 0, b""
        sock.settimeout(0.01)
        while sent < 100 * 1024 * 1024 and b"\r\n\r\n" not in answer:
            try:
                sock.sendall(chunk)
                sent += 65536
                answer += sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
        sock.settimeout(5)
        deadline = time.monotonic() + 5
        while b"}}" not in answer and time.monotonic() < deadline:
            try:
                answer += sock.recv(4096)
            except OSError:
                break
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"body_too_large" in answer
    assert sent < 10 * 1024 * 1024  # refused long before the 100 MB were sent
    assert rss_kb(server) - before < 10 * 1024
    assert server.call("GET", "/health")[0] == 200


def test_deep_json_wrong_content_type_and_non_utf8_are_4xx(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    deep = b'{"a": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    for path, token in (("/v1/bets", ALICE), ("/v1/supervisor/pause", BOSS), ("/v1/supervisor/correct", BOSS)):
        status, reply = server.call("POST", path, token, raw=deep)
        assert (status, reply["error"]["code"]) == (400, "json_too_deep"), path
    body = json.dumps(BET).encode()
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16"):
        status, reply = server.call("POST", "/v1/bets", ALICE, raw=body, headers={"Content-Type": ctype})
        assert (status, reply["error"]["code"]) == (415, "unsupported_media_type"), ctype
    status, reply = server.call("POST", "/v1/bets", ALICE, raw=body, headers={"Content-Type": ""})
    assert (status, reply["error"]["code"]) == (415, "unsupported_media_type")
    status, reply = server.call("POST", "/v1/bets", ALICE, raw=json.dumps(BET).encode("utf-16"))
    assert (status, reply["error"]["code"]) == (400, "malformed_json")
    status, reply = server.call("POST", "/v1/supervisor/pause", BOSS, body={"reason": "x", "extra": 1})
    assert (status, reply["error"]["code"]) == (422, "invalid_field")
    status, reply = server.call("POST", "/v1/supervisor/correct", BOSS, raw=b"")  # its body is required
    assert (status, reply["error"]["code"]) == (400, "malformed_json")
    assert server.call("GET", "/v1/players/alice/bets", ALICE)[1]["bets"] == []
    ok = server.call("POST", "/v1/bets", ALICE, raw=body, headers={"Content-Type": "Application/JSON; charset=UTF-8"})
    assert ok[0] == 201


def test_405_names_the_allowed_methods(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"GET /v1/bets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    head = answer.split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 405") and b"\r\nallow: post" in head
