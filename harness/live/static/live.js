// The live page: reads the bench event feed (Server-Sent Events live, the whole file in replay) and draws it.
"use strict";
const CAP = { dealer: 40, lane: 50, server: 80, incidents: 200, verdicts: 1000 };
const QUIET_NOTES = new Set(["open", "closed", "ended", "probe"]);
const QUIET_WHO = new Set(["step", "certify"]); // a certification run's progress: shown in the header, not as incidents
const INCIDENTS = new Set(["dropped", "reshake", "paused", "resumed", "link_down", "rearranged"]);
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const ft = (t) => Number(t).toFixed(2);

let S;
function fresh() {
  return { t: 0, bench: "", label: "", opened: 0, round: 0, tableState: "", bowlOn: false, touched: false, faces: "",
    lamp: "off", deadline: null, dealer: [], verdicts: [], lanes: {}, laneOrder: [], players: {}, server: [],
    incidents: [], final: null, ended: false, events: 0, tMax: 0,
    scenarios: 0, scenario: "", step: "", done: 0, failed: 0 };
}
S = fresh();
const push = (list, item, cap) => { list.push(item); if (list.length > cap) list.splice(0, list.length - cap); };

function apply(ev) {
  const d = ev.data || {};
  S.t = ev.t; S.events += 1; S.tMax = Math.max(S.tMax, ev.t);
  switch (ev.kind) {
    case "bench":
      S.bench = d.bench || ""; S.label = d.label || "";
      for (const name of Object.keys(d.lines || {})) if (!S.lanes[name]) { S.lanes[name] = []; S.laneOrder.push(name); }
      S.bowlOn = false; S.faces = ""; S.lamp = "off"; S.deadline = null; S.tableState = "";
      break;
    case "round":
      push(S.dealer, { t: ev.t, text: d.state === "ended" ? `round ${d.round} ended ${d.status} ${d.clause || d.faces || ""}` : `round ${d.round} ${d.state === "closed" ? "betting closed" : "opened"}`, bad: false }, CAP.dealer);
      if (d.state === "opened") {
        S.opened += 1; S.round = d.round; S.faces = ""; S.touched = false; S.deadline = d.deadline ?? null;
        S.tableState = "betting open";
        for (const p of Object.values(S.players)) p.bets = [];
      } else if (d.state === "closed") { S.tableState = "betting closed"; S.deadline = null; }
      else if (d.state === "ended") {
        S.deadline = null;
        S.tableState = d.status === "settled" ? `settled ${d.faces}` : `${d.status} (${d.clause || "-"})`;
      }
      break;
    case "table": tableEvent(ev, d); break;
    case "lamp": S.lamp = d.state || "off"; break;
    case "frame": {
      if (d.lamp) S.lamp = d.lamp;
      const lane = S.lanes[d.line] || (S.lanes[d.line] = [], S.laneOrder.push(d.line), S.lanes[d.line]);
      push(lane, { t: ev.t, dir: d.dir, device: d.device, msg: d.msg, raw: d.raw || "", error: d.error || "" }, CAP.lane);
      break;
    }
    case "bet": {
      const p = player(d.player);
      p.bets.push(d.accepted ? `${d.bet} ${d.stake}` : `<span class="refused">${esc(d.bet)} ${d.stake} refused ${esc(d.code)}</span>`);
      break;
    }
    case "balance": for (const [name, value] of Object.entries(d.balances || {})) player(name).balance = value; break;
    case "server":
      push(S.server, { t: ev.t, text: `${d.round} ${d.event}${d.clause ? " " + d.clause : ""}${d.faces ? " " + d.faces : ""}${d.reason ? " (" + d.reason + ")" : ""}` }, CAP.server);
      break;
    case "fault":
      push(S.incidents, { t: ev.t, cls: d.op === "heal" ? "heal" : d.op === "fault" ? "fault" : "incident", text: `${d.op}${d.round ? " round " + d.round : ""}: ${d.detail || ""}` }, CAP.incidents);
      break;
    case "note":
      if (d.who === "certify" && d.what === "scenarios") S.scenarios = Math.max(S.scenarios, Number(d.total) || 0);
      else if (d.who === "scenario") { S.scenario = d.what || ""; S.step = ""; }
      else if (d.who === "step") S.step = d.what || "";
      if (!QUIET_NOTES.has(d.what) && !QUIET_WHO.has(d.who)) push(S.incidents, { t: ev.t, cls: "incident", text: `${d.who} ${d.what} ${d.detail || ""}` }, CAP.incidents);
      break;
    case "verdict":
      if (d.final) S.final = d;
      else if (d.scenario) {
        S.done += 1; if (!d.ok && d.outcome !== "skipped") S.failed += 1;
        push(S.verdicts, { t: ev.t, round: "", scenario: d.scenario, ok: d.ok, expected: `scenario ${d.outcome}`, differences: [] }, CAP.verdicts);
      } else push(S.verdicts, { t: ev.t, round: d.table_round || d.round, rid: d.round, ok: d.ok, expected: d.expected || "", differences: d.differences || [], label: S.scenarios ? S.label : "" }, CAP.verdicts);
      break;
    case "end": S.ended = true; S.summary = d.summary || ""; break;
  }
}

function player(name) { return S.players[name] || (S.players[name] = { bets: [], balance: null }); }

function tableEvent(ev, d) {
  const e = d.event;
  if (e === "bowl_placed") S.bowlOn = true;
  else if (e === "tokens_placed") S.faces = "";
  else if (e === "shake_started") S.tableState = `shaking (${d.shake})`;
  else if (e === "bowl_lifted") { S.bowlOn = false; S.touched = !!d.touched; if (d.touched) S.tableState = `bowl touched token ${d.token}`; }
  else if (e === "revealed" || e === "rearranged") S.faces = d.faces || "";
  let text = e.replace(/_/g, " ");
  if (e === "bowl_lifted") text += `${d.early ? " early" : ""}${d.touched ? " — touched token " + d.token : ""}`;
  else if (e === "revealed") text += ` ${d.faces}${d.overlap ? " (overlap)" : ""}`;
  else if (e === "dropped") text += ` ${d.item}${d.token != null ? " " + d.token : ""}`;
  else if (e === "reshake" || e === "paused") text += ` ${d.reason}`;
  else if (e === "round_ended") text += ` ${d.status} ${d.clause || d.faces || ""}`;
  else if (d.player) text += ` ${d.player}`;
  push(S.dealer, { t: ev.t, text, bad: !!d.touched || e === "dropped" }, CAP.dealer);
  if (INCIDENTS.has(e) || d.touched || d.early) push(S.incidents, { t: ev.t, cls: "incident", text: d.round != null ? `round ${d.round}: ${text}` : text }, CAP.incidents);
}

// ---------------------------------------------------------------- drawing
let dirty = true;
function render() {
  if (!dirty) return; dirty = false;
  $("bench").textContent = S.bench ? `bench ${S.bench}${S.label ? " · " + S.label : ""}` : "";
  $("round").textContent = S.opened;
  $("progress").textContent = S.scenarios ? `scenario ${Math.min(S.done + 1, S.scenarios)}/${S.scenarios} · ${S.done - S.failed} passed · ${S.failed} failed` : "";
  $("scenario").textContent = S.scenario ? `${S.scenario}${S.step ? " — " + S.step : ""}` : "";
  $("clock").textContent = ft(S.t);
  $("bowl").setAttribute("class", "bowl" + (S.bowlOn ? "" : " off") + (S.touched ? " touched" : ""));
  drawTokens();
  $("lamp").setAttribute("class", `lamp lamp-${S.lamp}`);
  $("table-state").textContent = S.round ? `round ${S.round}: ${S.tableState}` : "";
  $("lamp-state").textContent = `lamp ${S.lamp}`;
  $("countdown").textContent = S.deadline != null && S.deadline > S.t ? `${ft(S.deadline - S.t)} s to close` : "";
  $("dealer").innerHTML = S.dealer.slice().reverse().map((x) => `<li${x.bad ? ' class="refused"' : ""}><span class="t">${ft(x.t)}</span>${esc(x.text)}</li>`).join("");
  $("verdicts").innerHTML = S.verdicts.slice().reverse().map(verdictItem).join("");
  $("lanes").innerHTML = S.laneOrder.map(laneHtml).join("");
  const rows = Object.entries(S.players).filter(([, p]) => p.bets.length || p.balance != null).sort();
  $("players").tBodies[0].innerHTML = rows.map(([name, p]) => `<tr><td>${esc(name)}</td><td>${p.bets.join(", ")}</td><td class="money">${p.balance == null ? "" : (p.balance / 100).toFixed(2)}</td></tr>`).join("");
  $("server").innerHTML = S.server.slice().reverse().map((x) => `<li><span class="t">${ft(x.t)}</span>${esc(x.text)}</li>`).join("");
  $("incidents").innerHTML = S.incidents.slice().reverse().map((x) => `<li class="${x.cls}"><span class="t">${ft(x.t)}</span>${esc(x.text)}</li>`).join("");
  const span = Math.max(S.tMax, 1e-9);
  $("timeline-bar").innerHTML = S.incidents.map((x) => `<span class="${x.cls}" style="left:${(100 * x.t / span).toFixed(2)}%" title="${esc(ft(x.t) + " " + x.text)}"></span>`).join("");
  const f = $("final");
  if (S.final) { f.textContent = S.final.summary || (S.final.ok ? "PASS" : "FAIL"); f.className = S.final.ok ? "ok" : "bad"; }
  else { f.textContent = ""; f.className = ""; }
  if (replay) { $("slider").value = S.t; $("slider-label").textContent = `${ft(S.t)} / ${ft(replay.tEnd)} s`; }
}

function drawTokens() {
  const g = $("tokens"); const faces = S.faces;
  let html = "";
  for (let i = 0; i < 4; i++) {
    const x = 120 + (i % 2 ? 22 : -22), y = 120 + (i < 2 ? -22 : 22);
    const face = faces[i] || "";
    html += `<circle class="token ${face ? esc(face) : "hidden"}" cx="${x}" cy="${y}" r="16" data-token="${i}"></circle>`;
  }
  g.innerHTML = html;
}

function verdictItem(v) {
  const kind = v.expected.split(" ")[0] || "?";
  const clause = (v.expected.match(/\(([^)]+)\)/) || [])[1] || "";
  const diffs = v.differences.map((x) => `<span class="diff">[${esc(x.clause)}] ${esc(x.what)}: expected ${esc(x.expected)}, server ${esc(x.actual)}</span>`).join("");
  const where = v.scenario ? esc(v.scenario) : `#${esc(v.round)}${v.label ? ` <span class="in">${esc(v.label)}</span>` : ""}`;
  return `<li class="${v.ok ? "ok" : "bad"} ${esc(kind)}" data-round="${esc(v.round)}" data-ok="${v.ok}" data-kind="${esc(kind)}" data-clause="${esc(clause)}">` +
    `<span class="mark">${v.ok ? "✓" : "✗"}</span> ${where} <span class="kind">${esc(v.expected)}</span>${diffs}</li>`;
}

function laneHtml(name) {
  const items = S.lanes[name].slice().reverse().map((x) => {
    const cls = x.error ? "error" : x.dir === "link" ? "link" : x.dir;
    const arrow = x.dir === "tx" ? "→" : x.dir === "rx" ? "←" : "•";
    const title = x.raw ? ` title="${esc(x.raw)}"` : "";
    return `<li class="${cls}"${title}><span class="t">${ft(x.t)}</span><span class="dir">${arrow}</span> ${esc(x.msg)}${x.error ? " " + esc(x.error) : ""}</li>`;
  }).join("");
  return `<div class="lane" data-line="${esc(name)}"><h3>${esc(name)}</h3><ul class="log">${items}</ul></div>`;
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
  if (t < S.t || t < replay.clock) { S = fresh(); replay.idx = 0; }
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
  $("mode").textContent = info.mode.toUpperCase();
  document.title = `xocdia-hil ${info.mode}${info.title ? " · " + info.title : ""}`;
  if (info.mode === "replay") await startReplay(info.speed || 1); else live();
  requestAnimationFrame(frame);
})();
