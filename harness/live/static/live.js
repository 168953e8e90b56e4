// The live page: reads the bench event feed (Server-Sent Events live, the whole file in replay) and draws it.
// Drawing is incremental: an event appends its row to a list, or patches the row it updates (a round's verdict, a
// player's bets); no list is rebuilt on an event, and a row under the pointer is never the one a full list drops,
// so a hovered row stays where it is, its raw bytes readable, while the run goes on.
"use strict";
const CAP = { dealer: 40, lane: 50, server: 80, incidents: 400, verdicts: 1000 };
const HOLD_MS = 2000; // a revealed result stays drawn this long (wall time) at least, and until the next round's tokens
const DUP_WINDOW_S = 0.5; // the same frame again on a line within this many bench seconds is marked a duplicate
const QUIET_NOTES = new Set(["open", "closed", "ended", "probe"]);
const QUIET_WHO = new Set(["step", "certify"]); // a certification run's progress: shown in the header, not as incidents
const INCIDENTS = new Set(["dropped", "reshake", "paused", "resumed", "link_down", "rearranged"]);
const DEVIATIONS = new Set(["void", "cancelled"]); // a round end that is not a settlement
const FAULT_NAME = /^(\w+)\(([^)]*)\)/; // "serial_drop(reader) at round 6 ..." -> kind, target
const AT_ROUND = /\bat round (\d+)\b/;
const MARKS = { // frame marks: the fault kind (active on the frame's line) that sets each, and what it means
  drop: { fault: "serial_drop", label: "drop", why: (f) => `sent while ${f} was active: the line may have lost it` },
  dup: { fault: "serial_duplicate", label: "dup", why: (f) => `sent while ${f} was active: the line may repeat it` },
  noise: { fault: "serial_flip serial_line_error serial_reorder", label: "noise", why: (f) => `sent while ${f} was active` },
};
const FORGED = { // a frame event's ``forged``: how the harness made the frame
  frame: { cls: "forged", label: "forged", why: "written onto the line by the harness as if this device sent it" },
  reply: { cls: "forged", label: "forged", why: "put by the harness in another device's reply on the bus, under its address" },
  noise: { cls: "noise", label: "noise", why: "written by the harness: a frame whose check holds but that the dialect refuses" },
  queued: { cls: "forged", label: "queued", why: "a report the harness made, queued on the device's own line (numbered and acknowledged as its own)" },
};
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const ft = (t) => Number(t).toFixed(2);
const wall = () => performance.now();
let INFO = { mode: "live", rounds: 0 };

let S;
function fresh() {
  return { t: 0, bench: "", label: "", opened: 0, round: 0, rounds: INFO.rounds || 0, tableState: "", bowlOn: false,
    touched: false, faces: "", lamp: "off", deadline: null, shown: null,
    dealer: log(), server: log(), incidents: log(), lanes: {}, laneOrder: [], lines: {}, lastFrame: {}, faults: [],
    verdicts: new Map(), changed: new Set(), causes: {}, ends: {}, players: {}, playersChanged: new Set(),
    kinds: new Map(), final: null, ended: false, events: 0, tMax: 0, alarms: [],
    scenarios: 0, scenario: "", step: "", done: 0, failed: 0 };
}
function log() { return { items: [], n: 0 }; }
function push(lg, item, cap) { item.n = lg.n++; lg.items.push(item); if (lg.items.length > cap) lg.items.splice(0, lg.items.length - cap); }
S = fresh();

function apply(ev) {
  const d = ev.data || {};
  S.t = ev.t; S.events += 1; S.tMax = Math.max(S.tMax, ev.t);
  switch (ev.kind) {
    case "bench":
      S.bench = d.bench || ""; S.label = d.label || "";
      for (const [name, roles] of Object.entries(d.lines || {})) {
        lane(name); S.lines[name] = (roles || []).map((r) => String(r).toLowerCase());
      }
      S.bowlOn = false; S.faces = ""; S.lamp = "off"; S.deadline = null; S.tableState = ""; S.faults = []; S.lastFrame = {};
      S.causes = {}; S.ends = {};
      break;
    case "round":
      push(S.dealer, { t: ev.t, text: d.state === "ended" ? `round ${d.round} ended ${d.status} ${d.clause || d.faces || ""}` : `round ${d.round} ${d.state === "closed" ? "betting closed" : "opened"}`, bad: false }, CAP.dealer);
      if (d.state === "opened") {
        S.opened += 1; S.round = d.round; S.faces = ""; S.touched = false; S.deadline = d.deadline ?? null;
        S.tableState = "betting open";
        for (const [name, p] of Object.entries(S.players)) if (p.bets.length) { p.bets = []; S.playersChanged.add(name); }
      } else if (d.state === "closed") { S.tableState = "betting closed"; S.deadline = null; }
      else if (d.state === "ended") {
        S.deadline = null;
        const text = d.status === "settled" ? `settled ${d.faces}` : `${d.status} (${d.clause || "-"})`;
        S.tableState = text; S.ends[d.round] = text;
        if (S.shown && S.shown.round === d.round) S.shown.outcome = text;
        else S.shown = { round: d.round, faces: "", outcome: text, at: wall(), placed: false, verdict: "" };
      }
      break;
    case "table": tableEvent(ev, d); break;
    case "lamp": S.lamp = d.state || "off"; break;
    case "frame": frameEvent(ev, d); break;
    case "bet": {
      const p = player(d.player);
      p.bets.push(d.accepted ? esc(`${d.bet} ${d.stake}`) : `<span class="refused">${esc(d.bet)} ${esc(d.stake)} refused ${esc(d.code)}</span>`);
      S.playersChanged.add(d.player);
      break;
    }
    case "balance":
      for (const [name, value] of Object.entries(d.balances || {})) { player(name).balance = value; S.playersChanged.add(name); }
      break;
    case "server":
      push(S.server, { t: ev.t, text: `${d.round} ${d.event}${d.clause ? " " + d.clause : ""}${d.faces ? " " + d.faces : ""}${d.reason ? " (" + d.reason + ")" : ""}` }, CAP.server);
      break;
    case "fault": faultEvent(ev, d); break;
    case "note":
      if (d.who === "certify" && d.what === "scenarios") S.scenarios = Math.max(S.scenarios, Number(d.total) || 0);
      else if (d.who === "scenario") { S.scenario = d.what || ""; S.step = ""; }
      else if (d.who === "step") S.step = d.what || "";
      if (d.who === "monitor" && d.what === "alarm") {
        S.alarms.push({ t: ev.t, label: S.label, ...d });
        incident(ev.t, "alarm", "monitor alarm", `round ${d.round}: ${d.detail || ""}`);
      } else if (!QUIET_NOTES.has(d.what) && !QUIET_WHO.has(d.who)) incident(ev.t, "incident", `note: ${d.who}`, `${d.who} ${d.what} ${d.detail || ""}`);
      break;
    case "verdict": verdictEvent(ev, d); break;
    case "end": S.ended = true; S.summary = d.summary || ""; break;
  }
}

function player(name) { return S.players[name] || (S.players[name] = { bets: [], balance: null }); }
function lane(name) { if (!S.lanes[name]) { S.lanes[name] = log(); S.laneOrder.push(name); } return S.lanes[name]; }

function incident(t, cls, kind, text) {
  push(S.incidents, { t, cls, kind, text }, CAP.incidents);
  S.kinds.set(kind, (S.kinds.get(kind) || 0) + 1);
}

// What explains a round that did not settle (a planned fault, the table's own incident), by the table's round number.
function addCause(round, text) {
  const key = String(round);
  const list = S.causes[key] || (S.causes[key] = []);
  if (list.includes(text)) return;
  list.push(text);
  for (const [k, v] of S.verdicts) if (String(v.round) === key) S.changed.add(k);
}

function tableEvent(ev, d) {
  const e = d.event;
  if (e === "bowl_placed") S.bowlOn = true;
  else if (e === "tokens_placed") { S.faces = ""; if (S.shown && d.round !== S.shown.round) S.shown.placed = true; }
  else if (e === "shake_started") S.tableState = `shaking (${d.shake})`;
  else if (e === "bowl_lifted") { S.bowlOn = false; S.touched = !!d.touched; if (d.touched) S.tableState = `bowl touched token ${d.token}`; }
  else if (e === "revealed" || e === "rearranged") {
    S.faces = d.faces || "";
    const round = d.round ?? S.round;
    const same = S.shown && S.shown.round === round;
    S.shown = { round, faces: S.faces, outcome: same ? S.shown.outcome : "", at: wall(), placed: false, verdict: same ? S.shown.verdict : "" };
  }
  let text = e.replace(/_/g, " ");
  if (e === "bowl_lifted") text += `${d.early ? " early" : ""}${d.touched ? " — touched token " + d.token : ""}`;
  else if (e === "revealed") text += ` ${d.faces}${d.overlap ? " (overlap)" : ""}`;
  else if (e === "dropped") text += ` ${d.item}${d.token != null ? " " + d.token : ""}`;
  else if (e === "reshake" || e === "paused") text += ` ${d.reason}`;
  else if (e === "round_ended") text += ` ${d.status} ${d.clause || d.faces || ""}`;
  else if (d.player) text += ` ${d.player}`;
  push(S.dealer, { t: ev.t, text, bad: !!d.touched || e === "dropped" }, CAP.dealer);
  if (INCIDENTS.has(e) || d.touched || d.early) {
    incident(ev.t, "incident", d.touched ? "touched" : d.early ? "early lift" : e, d.round != null ? `round ${d.round}: ${text}` : text);
    if (d.round != null) addCause(d.round, `the table: ${text}`);
  }
}

function faultEvent(ev, d) {
  const detail = d.detail || "";
  const m = FAULT_NAME.exec(detail);
  if (d.op === "fault") S.faults.push({ kind: m ? m[1] : "", target: m ? m[2].toLowerCase() : "", name: m ? m[0] : detail, detail });
  else if (d.op === "heal") { const i = S.faults.findIndex((f) => f.detail === detail); if (i >= 0) S.faults.splice(i, 1); }
  if (d.op === "fault" || d.op === "cancel") {
    const at = d.round || (AT_ROUND.exec(detail) || [])[1];
    if (at) addCause(at, `planned fault ${detail}`);
    if (S.round && String(S.round) !== String(at)) addCause(S.round, `planned fault ${detail}`); // the round it hit
  }
  incident(ev.t, d.op === "heal" ? "heal" : d.op === "fault" ? "fault" : "incident", `fault: ${d.op}`, `${d.op}${d.round ? " round " + d.round : ""}: ${detail}`);
}

function onLine(target, name, device) {
  return !!target && (target === name || target === String(device || "").toLowerCase() || (S.lines[name] || []).includes(target));
}

function frameEvent(ev, d) {
  if (d.lamp) S.lamp = d.lamp;
  const name = d.line;
  const raw = d.raw || "";
  const marks = [];
  if (d.error && d.dir !== "link") marks.push({ cls: "reject", label: d.dir === "tx" ? "NAK" : "reject", why: d.error });
  if (d.forged) marks.push(FORGED[d.forged] || FORGED.frame);
  for (const [cls, m] of Object.entries(MARKS)) {
    const f = S.faults.find((x) => m.fault.split(" ").includes(x.kind) && onLine(x.target, name, d.device));
    if (f) marks.push({ cls, label: m.label, why: m.why(f.name) });
  }
  const prev = S.lastFrame[name];
  if (d.dir === "tx" && prev && prev.msg === d.msg && prev.raw === raw && ev.t - prev.t <= DUP_WINDOW_S && !marks.some((x) => x.cls === "dup"))
    marks.push({ cls: "dup", label: "dup", why: `the same frame as ${ft(ev.t - prev.t)} s before` });
  if (d.dir === "tx") S.lastFrame[name] = { t: ev.t, msg: d.msg, raw };
  push(lane(name), { t: ev.t, dir: d.dir, device: d.device, msg: d.msg, raw, error: d.error || "", marks }, CAP.lane);
}

function verdictEvent(ev, d) {
  if (d.final) {
    S.final = d;
    (d.differences || []).forEach((x, i) => runDifference(ev, x, i));
    return;
  }
  if (d.scenario) {
    S.done += 1; if (!d.ok && d.outcome !== "skipped") S.failed += 1;
    setVerdict(`scenario ${S.done} ${d.scenario}`, { t: ev.t, round: "", scenario: d.scenario, ok: d.ok, expected: `scenario ${d.outcome}`, differences: [], label: "" });
    return;
  }
  const round = d.table_round || d.round;
  const key = `${S.label} #${d.round}`;
  setVerdict(key, { t: ev.t, round, rid: String(d.round), ok: d.ok, expected: d.expected || "", differences: d.differences || [], label: S.scenarios ? S.label : "" });
  if (S.shown && S.shown.round === round) S.shown.verdict = key;
}

// A difference of the run's verdict: it fails the round it names (so that no row shows a tick the run's verdict
// contradicts), or stands as a row of its own.
function runDifference(ev, x, i) {
  const key = [...S.verdicts.keys()].find((k) => S.verdicts.get(k).rid === String(x.round) && k.startsWith(`${S.label} #`));
  const diff = { clause: x.clause, what: x.what, expected: x.expected ?? "", actual: x.actual ?? "", run: true };
  if (key) {
    const v = S.verdicts.get(key);
    if (!v.differences.some((y) => y.clause === diff.clause && y.what === diff.what)) v.differences = [...v.differences, diff];
    v.ok = false; S.changed.add(key);
  } else setVerdict(`run ${i}`, { t: ev.t, round: x.round || "run", rid: String(x.round || ""), ok: false, expected: "the run's verdict", differences: [diff], label: "" });
}

function setVerdict(key, v) {
  if (!S.verdicts.has(key) && S.verdicts.size >= CAP.verdicts) S.verdicts.delete(S.verdicts.keys().next().value);
  S.verdicts.set(key, v); S.changed.add(key);
}

// ok: the server did what the rules say; expected: it did, and the round did not settle because of a planned fault
// or the scenario's own incident (a deviation the run meant); bad: the judge found a difference.
function verdictKind(v) {
  if (!v.ok) return "bad";
  return DEVIATIONS.has(v.expected.split(" ")[0]) ? "expected" : "ok";
}
function causeOf(v) { return (S.causes[String(v.round)] || []).join("; "); }

// ---------------------------------------------------------------- drawing
let dirty = true;
const HIDDEN = new Set(); // incident kinds the filter hides (kept across a replay's seeks)
let D; // what is drawn, so that a render only adds and patches: rows drawn per log, rows by key
function freshDom() {
  for (const id of ["dealer", "server", "incidents", "verdicts", "lanes", "timeline-bar", "incident-kinds"]) $(id).replaceChildren();
  $("players").tBodies[0].replaceChildren();
  $("raw-tip").hidden = true;
  return { drawn: new Map(), verdictRows: new Map(), laneLists: new Map(), playerRows: new Map(), kindBoxes: new Map(),
    marks: [], holdTimer: null };
}

function render() {
  if (!dirty) return; dirty = false;
  drawHeader();
  drawTable();
  appendRows($("dealer"), S.dealer, "dealer", (x) => row(x.bad ? "refused" : "", x.t, esc(x.text)), CAP.dealer);
  appendRows($("server"), S.server, "server", (x) => row("", x.t, esc(x.text)), CAP.server);
  for (const name of S.laneOrder) appendRows(laneList(name), S.lanes[name], `lane ${name}`, frameRow, CAP.lane);
  appendRows($("incidents"), S.incidents, "incidents", incidentRow, CAP.incidents);
  drawMarks();
  drawKinds();
  drawVerdicts();
  drawPlayers();
  if (replay) { $("slider").value = S.t; $("slider-label").textContent = `${ft(S.t)} / ${ft(replay.tEnd)} s`; }
}

// New items of a log, newest first, at the top of ``el``; the oldest rows beyond ``cap`` dropped. A list under the
// pointer is left as it is until the pointer leaves it (its new rows wait, counted in its ``data-waiting``), so the
// row being read neither moves nor goes.
function appendRows(el, lg, key, make, cap) {
  const from = D.drawn.get(key) || 0;
  if (lg.n === from) return;
  if (el.matches(":hover")) { el.dataset.waiting = String(lg.n - from); return; }
  delete el.dataset.waiting;
  const fragment = document.createDocumentFragment();
  for (const item of lg.items) if (item.n >= from) fragment.prepend(make(item));
  el.prepend(fragment);
  D.drawn.set(key, lg.n);
  for (let extra = el.children.length - cap; extra > 0; extra -= 1) el.lastElementChild.remove();
}

function row(cls, t, html, attrs = {}) {
  const li = document.createElement("li");
  if (cls) li.className = cls;
  li.innerHTML = `<span class="t">${ft(t)}</span>${html}`;
  for (const [k, v] of Object.entries(attrs)) li.setAttribute(k, v);
  return li;
}

function laneList(name) {
  let ul = D.laneLists.get(name);
  if (!ul) {
    const div = document.createElement("div");
    div.className = "lane"; div.dataset.line = name;
    div.innerHTML = `<h3>${esc(name)}</h3><ul class="log"></ul>`;
    $("lanes").append(div);
    ul = div.querySelector("ul");
    D.laneLists.set(name, ul);
  }
  return ul;
}

function frameRow(x) {
  const cls = [x.error ? "error" : x.dir === "link" ? "link" : x.dir, ...x.marks.map((m) => `mark-${m.cls}`)].join(" ");
  const arrow = x.dir === "tx" ? "→" : x.dir === "rx" ? "←" : "•";
  const badges = x.marks.map((m) => `<span class="badge ${m.cls}">${esc(m.label)}</span>`).join("");
  const tip = [x.raw ? `bytes: ${x.raw}` : "bytes: (none recorded)", ...x.marks.map((m) => `${m.label}: ${m.why}`)].join("\n");
  return row(cls, x.t, `<span class="dir">${arrow}</span>${badges} ${esc(x.msg)}${x.error ? " " + esc(x.error) : ""}`,
    { "data-raw": x.raw, "data-tip": tip, "data-marks": x.marks.map((m) => m.cls).join(" ") });
}

function incidentRow(x) {
  const li = row(x.cls, x.t, esc(x.text), { "data-kind": x.kind, "data-t": String(x.t), title: replay ? "seek here" : "" });
  li.hidden = HIDDEN.has(x.kind);
  const mark = document.createElement("span");
  mark.className = x.cls; mark.dataset.kind = x.kind; mark.dataset.t = String(x.t);
  mark.title = `${ft(x.t)} ${x.text}${replay ? " (click: seek here)" : ""}`;
  mark.hidden = li.hidden;
  $("timeline-bar").append(mark);
  D.marks.push(mark);
  while (D.marks.length > CAP.incidents) D.marks.shift().remove();
  return li;
}

function drawMarks() {
  const span = Math.max(S.tMax, 1e-9);
  for (const m of D.marks) m.style.left = `${(100 * Number(m.dataset.t) / span).toFixed(2)}%`;
}

function drawKinds() {
  for (const [kind, count] of S.kinds) {
    let box = D.kindBoxes.get(kind);
    if (!box) {
      box = document.createElement("label");
      box.innerHTML = `<input type="checkbox"> ${esc(kind)} <span class="count"></span>`;
      const input = box.querySelector("input");
      input.checked = !HIDDEN.has(kind); input.dataset.kind = kind;
      input.onchange = () => { if (input.checked) HIDDEN.delete(kind); else HIDDEN.add(kind); filterIncidents(); };
      $("incident-kinds").append(box);
      D.kindBoxes.set(kind, box);
    }
    box.querySelector(".count").textContent = String(count);
  }
}
function filterIncidents() {
  for (const el of document.querySelectorAll("#incidents li, #timeline-bar span")) el.hidden = HIDDEN.has(el.dataset.kind);
}

function drawVerdicts() {
  for (const key of S.changed) {
    const v = S.verdicts.get(key);
    let li = D.verdictRows.get(key);
    if (!v) { if (li) { li.remove(); D.verdictRows.delete(key); } continue; }
    const fresh = !li;
    if (fresh) { li = document.createElement("li"); D.verdictRows.set(key, li); }
    fillVerdict(li, v);
    if (fresh) $("verdicts").prepend(li);
  }
  S.changed.clear();
}

function fillVerdict(li, v) {
  const kind = v.expected.split(" ")[0] || "?";
  const clause = (v.expected.match(/\(([^)]+)\)/) || [])[1] || "";
  const verdict = verdictKind(v);
  const cause = verdict === "expected" ? causeOf(v) || "no planned fault or table incident in the feed names it" : "";
  const diffs = v.differences.map((x) => `<span class="diff">[${esc(x.clause)}] ${esc(x.what)}${x.expected || x.actual ? `: expected ${esc(x.expected)}, server ${esc(x.actual)}` : ""}${x.run ? " (the run's verdict)" : ""}</span>`).join("");
  const where = v.scenario ? esc(v.scenario) : `#${esc(v.round)}${v.label ? ` <span class="in">${esc(v.label)}</span>` : ""}`;
  li.className = `${v.ok ? "ok" : "bad"} ${verdict} ${kind}`;
  Object.assign(li.dataset, { round: String(v.round), ok: String(v.ok), kind, clause, verdict, cause });
  li.innerHTML = `<span class="mark">${v.ok ? "✓" : "✗"}</span> ${where} <span class="kind">${esc(v.expected)}</span>` +
    `${cause ? `<span class="cause">expected: ${esc(cause)}</span>` : ""}${diffs}`;
}

function drawPlayers() {
  const body = $("players").tBodies[0];
  for (const name of S.playersChanged) {
    const p = S.players[name];
    let tr = D.playerRows.get(name);
    if (!tr) {
      tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td></td><td class='money'></td>";
      tr.cells[0].textContent = name; tr.dataset.player = name;
      const after = [...body.rows].find((r) => r.dataset.player > name);
      body.insertBefore(tr, after || null);
      D.playerRows.set(name, tr);
    }
    tr.cells[1].innerHTML = p.bets.join(", ");
    tr.cells[2].textContent = p.balance == null ? "" : (p.balance / 100).toFixed(2);
  }
  S.playersChanged.clear();
}

// The header: the table's round of the run's rounds, the bench time, the rows' tally and the one verdict. The
// verdict is the run's (the judge's, or the checkers' on a fault run), and never reads PASS over a failed row.
function drawHeader() {
  $("bench").textContent = S.bench ? `bench ${S.bench}${S.label ? " · " + S.label : ""}` : "";
  $("round").textContent = S.round;
  $("of").textContent = S.rounds ? ` of ${S.rounds}` : "";
  $("progress").textContent = S.scenarios ? `scenario ${Math.min(S.done + 1, S.scenarios)}/${S.scenarios} · ${S.done - S.failed} passed · ${S.failed} failed` : "";
  $("scenario").textContent = S.scenario ? `${S.scenario}${S.step ? " — " + S.step : ""}` : "";
  $("clock").textContent = ft(S.t);
  let ok = 0; const expected = []; const bad = [];
  for (const v of S.verdicts.values()) {
    const k = verdictKind(v);
    if (k === "ok") ok += 1; else if (k === "expected") expected.push(`#${v.round}: ${causeOf(v) || v.expected}`); else bad.push(v.scenario || `#${v.round}`);
  }
  const tally = $("tally");
  tally.innerHTML = S.verdicts.size ? `<span class="ok">${ok} ✓</span> · <span class="expected">${expected.length} expected</span> · <span class="bad">${bad.length} ✗</span>` : "";
  tally.title = expected.join("\n");
  Object.assign(tally.dataset, { ok: String(ok), expected: String(expected.length), bad: String(bad.length) });
  drawAlarm();
  const f = $("final");
  if (!S.final) { f.textContent = ""; f.className = ""; f.dataset.verdict = ""; return; }
  const summary = S.final.summary || (S.final.ok ? "PASS" : "FAIL");
  const failed = !S.final.ok || bad.length > 0;
  f.textContent = S.final.ok && bad.length ? `FAIL: ${bad.length} failed (${bad.slice(0, 4).join(", ")}) under "${summary}"` : summary;
  f.className = failed ? "bad" : "ok";
  f.dataset.verdict = failed ? "fail" : "pass";
}

// The bias monitor's alarm: a badge in the header for as long as the page shows the run (an alarm latches).
function drawAlarm() {
  const badge = $("alarm");
  const a = S.alarms[S.alarms.length - 1];
  badge.hidden = !a;
  if (!a) { badge.textContent = ""; badge.dataset.round = ""; return; }
  const more = S.alarms.length > 1 ? ` (${S.alarms.length} alarms)` : "";
  badge.textContent = `bias alarm: favours ${a.favours} at round ${a.round}, z ${Number(a.z).toFixed(1)}${more}`;
  badge.title = S.alarms.map((x) => `${x.label ? x.label + ": " : ""}round ${x.round}: ${x.detail}`).join("\n");
  Object.assign(badge.dataset, { round: String(a.round), favours: String(a.favours), count: String(S.alarms.length) });
}

// The table: the live state, except that a revealed result (or a round's void) stays drawn until the next round's
// tokens are placed or HOLD_MS of wall time have passed, whichever is later, with its outcome beside it.
function drawTable() {
  const shown = S.shown;
  const age = shown ? wall() - shown.at : 0;
  const held = shown && (!shown.placed || age < HOLD_MS) ? shown : null;
  if (held && held.placed && D.holdTimer == null) D.holdTimer = setTimeout(() => { D.holdTimer = null; dirty = true; }, HOLD_MS - age + 20);
  const faces = held && held.faces ? held.faces : S.faces;
  const bowlOn = held && held.placed ? false : S.bowlOn;
  $("bowl").setAttribute("class", "bowl" + (bowlOn ? "" : " off") + (S.touched && !(held && held.placed) ? " touched" : ""));
  drawTokens(faces);
  const table = $("table");
  table.dataset.faces = faces;
  table.dataset.shownRound = held ? String(held.round) : "";
  $("lamp").setAttribute("class", `lamp lamp-${S.lamp}`);
  $("table-state").textContent = S.round ? `round ${S.round}: ${S.tableState}` : "";
  $("lamp-state").textContent = `lamp ${S.lamp}`;
  $("countdown").textContent = S.deadline != null && S.deadline > S.t ? `${ft(S.deadline - S.t)} s to close` : "";
  const result = $("result");
  if (!held) { result.textContent = ""; result.className = ""; result.dataset.round = ""; return; }
  const v = held.verdict ? S.verdicts.get(held.verdict) : null;
  const verdict = v ? verdictKind(v) : "";
  const outcome = v ? v.expected : held.outcome || (held.faces ? `revealed ${held.faces}` : "");
  const cause = verdict === "expected" ? causeOf(v) : "";
  result.innerHTML = `round ${esc(held.round)}: <b>${esc(outcome)}</b>${v ? ` <span class="mark">${v.ok ? "✓" : "✗"}</span>` : ""}` +
    `${cause ? ` <span class="cause">${esc(cause)}</span>` : ""}`;
  result.className = verdict;
  result.dataset.round = String(held.round);
}

function drawTokens(faces) {
  const g = $("tokens");
  if (g.children.length !== 4) {
    g.innerHTML = [0, 1, 2, 3].map((i) => `<circle class="token hidden" cx="${120 + (i % 2 ? 22 : -22)}" cy="${120 + (i < 2 ? -22 : 22)}" r="16" data-token="${i}"></circle>`).join("");
  }
  for (let i = 0; i < 4; i++) {
    const cls = `token ${faces[i] ? faces[i] : "hidden"}`;
    if (g.children[i].getAttribute("class") !== cls) g.children[i].setAttribute("class", cls);
  }
}

// The raw bytes of the device-line row under the pointer, in a box that stays while the pointer does.
function showTip(e) {
  const tip = $("raw-tip");
  const li = e.target.closest("#lanes li");
  if (!li) return; // between rows: the last row's bytes stay up until the pointer leaves the lanes
  tip.textContent = li.dataset.tip || "";
  tip.dataset.raw = li.dataset.raw || "";
  const r = li.getBoundingClientRect();
  tip.style.left = `${Math.max(4, Math.min(r.left, window.innerWidth - 420))}px`;
  tip.style.top = `${r.bottom + 4}px`;
  tip.hidden = false;
}

// Click-to-seek from an incident or its mark (replay).
function seekTo(e) {
  const target = e.target.closest("[data-t]");
  if (!target || !replay) return;
  pause(); seek(Number(target.dataset.t));
}

function frame() { render(); requestAnimationFrame(frame); }

// ---------------------------------------------------------------- live
function live() {
  $("status").textContent = "live";
  const source = new EventSource("/feed");
  source.onmessage = (m) => { apply(JSON.parse(m.data)); dirty = true; };
  source.addEventListener("closed", () => { source.close(); $("status").textContent = `finished · ${S.events} events`; dirty = true; });
  source.onerror = () => { if (!S.ended) $("status").textContent = "disconnected (retrying)"; };
}

// ---------------------------------------------------------------- replay
let replay = null;
async function startReplay(speed) {
  const events = await (await fetch("/feed.json")).json();
  if (!INFO.rounds && events.filter((e) => e.kind === "bench").length === 1) { // one rig: its rounds are the run's
    INFO.rounds = Math.max(0, ...events.filter((e) => e.kind === "round").map((e) => Number(e.data.round) || 0));
    S.rounds = INFO.rounds;
  }
  replay = { events, idx: 0, playing: true, speed, tEnd: events.length ? events[events.length - 1].t : 0, last: null, clock: 0 };
  $("replay").hidden = false;
  $("slider").max = replay.tEnd;
  $("speed").value = String(speed);
  if ($("speed").value !== String(speed)) { $("speed").add(new Option(String(speed))); $("speed").value = String(speed); }
  $("status").textContent = `replay · ${events.length} events`;
  $("play").onclick = () => { replay.playing = !replay.playing; replay.last = null; $("play").textContent = replay.playing ? "pause" : "play"; };
  $("step").onclick = () => { pause(); if (replay.idx < events.length) { apply(events[replay.idx++]); replay.clock = S.t; dirty = true; } };
  $("next-round").onclick = () => {
    pause();
    while (replay.idx < events.length) { const ev = events[replay.idx++]; apply(ev); if (ev.kind === "verdict") break; }
    replay.clock = S.t; dirty = true;
  };
  $("speed").onchange = () => { replay.speed = Number($("speed").value); };
  $("slider").oninput = () => { pause(); seek(Number($("slider").value)); };
  requestAnimationFrame(tick);
}
function pause() { replay.playing = false; $("play").textContent = "play"; }
function seek(t) {
  if (t < S.t || t < replay.clock) { S = fresh(); D = freshDom(); replay.idx = 0; }
  const ev = replay.events;
  while (replay.idx < ev.length && ev[replay.idx].t <= t) apply(ev[replay.idx++]);
  replay.clock = t; S.t = t; dirty = true;
}
function tick(now) {
  if (replay.playing) {
    const dt = replay.last == null ? 0 : (now - replay.last) / 1000;
    let target = replay.clock + dt * replay.speed;
    const next = replay.events[replay.idx];
    if (next && next.t - target > 2 * replay.speed + 1) target = next.t; // skip long quiet stretches
    seek(Math.min(target, replay.tEnd));
    if (replay.idx >= replay.events.length) { pause(); $("status").textContent = `replay finished · ${replay.events.length} events`; }
  }
  replay.last = now;
  requestAnimationFrame(tick);
}

(async function main() {
  const info = await (await fetch("/info")).json();
  INFO = info; S.rounds = info.rounds || 0;
  D = freshDom();
  $("lanes").addEventListener("mouseover", showTip);
  $("lanes").addEventListener("mouseleave", () => { $("raw-tip").hidden = true; dirty = true; });
  for (const id of ["dealer", "server", "incidents"]) $(id).addEventListener("mouseleave", () => { dirty = true; });
  $("incidents").addEventListener("click", seekTo);
  $("timeline-bar").addEventListener("click", seekTo);
  $("mode").textContent = info.mode.toUpperCase();
  document.title = `xocdia-hil ${info.mode}${info.title ? " · " + info.title : ""}`;
  if (info.mode === "replay") await startReplay(info.speed || 1); else live();
  requestAnimationFrame(frame);
})();
