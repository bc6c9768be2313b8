// A real failover chain, offline: "uuldana run" in a real terminal starts the real Claude Code, which answers once
// and then meets its plan limit; uuldana must leave it and continue in the real Codex CLI with the conversation,
// which answers and meets its own limit; the real Gemini CLI then takes over with both answers. One server on
// loopback plays the three vendors' APIs, and what each CLI sends it proves what the handoff carried.
import { spawnSync } from "node:child_process";
import http from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

import { harnesses } from "./harness.mjs";
import { sessionOf, stopSession, uuldanaPid } from "./session.mjs";
import { startTerminal } from "./terminal.mjs";
import { LIMIT_REPLIES, anthropicAnswer, geminiAnswer, responsesAnswer } from "./vendor-api.mjs";

const CHAIN = ["claude-code", "codex", "gemini"];
// the user's three messages and the three agents' answers: sentences no agent chrome could produce by itself
const ASK = ["Which colour is the lighthouse on the north pier?", "And how tall is it?", "When was it built?"];
const ANSWER = {
  "claude-code": "The lighthouse on the north pier is painted saffron yellow.",
  codex: "Codex checked the chart: the saffron lighthouse stands nineteen metres tall.",
  gemini: "Gemini read the harbour log: the saffron lighthouse was built in 1874.",
};
// when each limit resets, seconds from now; different, so a rest taken from the wrong screen shows
const RESET_IN = { "claude-code": 5400, codex: 7800 };
// what the agents' limit screens and exits say, which must not reach the next agent as conversation
const LIMIT_SCREEN = /hit your|usage limit|rate-limit-options|resume this session|codex resume/i;
const COLS = 120;
const ROWS = 40;

// Runs the chain once, each step a check; the screen's last lines and the server's last requests explain a failure.
// The chain runs twice: with every agent's own transcript, and with Codex's rollout file removed while Codex runs,
// so that its part comes from its screen.
export async function checkFailoverChain({ root, bins, detections, env, check }) {
  for (const removed of [undefined, "codex"]) await checkChainOnce({ root, bins, detections, env, check, removed });
}

async function checkChainOnce({ root, bins, detections, env, check, removed }) {
  const missing = CHAIN.filter((id) => !detections.get(id)?.path);
  if (missing.length) {
    check(false, `failover chain: ${missing.join(", ")} installed`);
    return;
  }
  const started = Date.now();
  const api = await startLoopbackApi();
  const folder = mkdtempSync(join(tmpdir(), "uuldana-real-failover-"));
  const cwd = mkdtempSync(join(tmpdir(), "uuldana-real-failover-cwd-"));
  const dirs = { UULDANA_CONFIG_DIR: join(folder, "config"), UULDANA_DATA_DIR: join(folder, "data"), UULDANA_CACHE_DIR: join(folder, "cache") };
  const homes = writeConfig(dirs.UULDANA_CONFIG_DIR, api.base, cwd);
  const terminal = startTerminal({ root, cwd, cols: COLS, rows: ROWS, env: { ...env, ...dirs, TERM: "xterm-256color", PATH: `${bins}${delimiter}${env.PATH}` } });
  const shown = () => terminal.lines().filter((line) => line.trim()).slice(-14).join("\n");
  const name = removed ? `failover chain, ${removed}'s transcript removed` : "failover chain";
  const say = (ok, text, detail = "") => check(ok, `${name}: ${text}`, ok ? "" : `${detail}${detail ? "\n" : ""}--- last screen lines ---\n${shown()}\n--- loopback requests ---\n${api.log.slice(-8).join("\n")}`);
  try {
    await runChain({ terminal, api, dirs, root, say, removed, homes });
  } finally {
    await stopSession(dirs.UULDANA_DATA_DIR, terminal);
    await terminal.close();
    api.close();
  }
  console.log(`     (${name} took ${Math.round((Date.now() - started) / 1000)}s)`);
}

// --- internal ---

async function runChain({ terminal, api, dirs, root, say, removed, homes }) {
  // Claude Code: one question answered, the next one meets the plan limit
  // uuldana gives Claude Code its status line, which takes the place of the footer's "? for shortcuts"
  const claudeUp = await terminal.waitFor(() => /\? for shortcuts|^ *❯/m.test(terminal.text()), 40_000);
  say(claudeUp, "the real Claude Code starts under uuldana run");
  if (!claudeUp) return;
  await terminal.type(ASK[0]);
  const answered = await terminal.waitFor(() => terminal.text().includes(ANSWER["claude-code"]), 30_000);
  say(answered, "Claude Code shows the answer the server streamed");
  if (!answered) return;
  await terminal.type(ASK[1]);
  const codexAsked = await terminal.waitFor(() => api.handed.codex !== undefined, 45_000);
  say(api.limited.has("claude-code"), "Claude Code met its plan limit (the server answered 429)");
  say(codexAsked, "uuldana leaves Claude Code and the real Codex CLI sends the handoff prompt to its API");
  if (!codexAsked) return;
  const toCodex = api.handed.codex;
  say(toCodex.includes(ANSWER["claude-code"]), "the handoff to Codex carries Claude Code's answer", toCodex.slice(0, 600));
  say(!LIMIT_SCREEN.test(toCodex), "the handoff to Codex carries nothing of Claude Code's limit screen or exit", toCodex.match(LIMIT_SCREEN)?.[0]);
  checkOnce(say, "Codex", api.bodies.codex, [ASK[0], ANSWER["claude-code"], ASK[1]]);

  // Codex: answers the handoff, then meets its usage limit on the next message
  const codexAnswered = await terminal.waitFor(() => terminal.text().includes(ANSWER.codex) && /›/.test(terminal.text()), 30_000);
  say(codexAnswered, "Codex shows the answer the server streamed");
  if (!codexAnswered) return;
  await terminal.settle();
  // a rollout file removed while Codex runs: its part of the next handoff comes from its screen
  if (removed === "codex") for (const file of rollouts(homes.codex.CODEX_HOME)) rmSync(file);
  await terminal.type(ASK[2]);
  const geminiAsked = await terminal.waitFor(() => api.handed.gemini !== undefined, 60_000);
  say(api.limited.has("codex"), "Codex met its usage limit (the server answered 429)");
  say(geminiAsked, "uuldana leaves Codex and the real Gemini CLI sends the handoff prompt to its API");
  if (!geminiAsked) return;
  const toGemini = api.handed.gemini;
  say(toGemini.includes(ANSWER["claude-code"]) && toGemini.includes(ANSWER.codex), "the handoff to Gemini carries both Claude Code's and Codex's answers", toGemini.slice(0, 600));
  say(!LIMIT_SCREEN.test(toGemini), "the handoff to Gemini carries nothing of either limit screen or exit", toGemini.match(LIMIT_SCREEN)?.[0]);
  checkOnce(say, "Gemini", api.bodies.gemini, [ASK[0], ANSWER["claude-code"], ASK[1], ANSWER.codex, ASK[2]]);
  say(toGemini.startsWith(geminiPreamble()), "the handoff to Gemini begins with the preamble that quotes the user's last request", toGemini.slice(0, 900));
  if (!removed) {
    const exact = [geminiPreamble(), "", ...fromTranscripts(), ""].join("\n");
    say(toGemini.trimEnd() === exact.trimEnd(), "the handoff to Gemini is exactly the preamble and every earlier turn once, from the two transcripts", `${toGemini}\n--- expected ---\n${exact}`);
  }
  const geminiAnswered = await terminal.waitFor(() => terminal.text().includes(ANSWER.gemini), 30_000);
  say(geminiAnswered, "Gemini shows the answer the server streamed");

  // the session ends the way a user's session manager ends it: SIGTERM to uuldana
  const pid = uuldanaPid(dirs.UULDANA_DATA_DIR);
  if (pid) process.kill(pid, "SIGTERM");
  const code = await terminal.waitFor(() => /^code \d+/m.test(terminal.plainOutput()), 30_000).then(() => /^code (\d+)/m.exec(terminal.plainOutput())?.[1]);
  say(code === "143", `uuldana exits 143 after SIGTERM (exit ${code ?? "none"})`);
  const output = terminal.plainOutput();
  for (const [from, to] of [["claude-code", "codex"], ["codex", "gemini"]]) {
    // the line begins with the terminal's bell: a failover is told (a terminal of no known kind gets no other sequence)
    const line = new RegExp(`^\x07uuldana: ${from}'s [\\w-]+ (limit|allowance) is gone(?: by its own account)?; it rests until [\\d-]+ [\\d:]+ UTC; continuing with ${to} \\(.+\\) at ask with the conversation so far`, "m");
    say(line.test(output), `uuldana rings the bell and says ${from} rests and ${to} continues the conversation`);
  }
  say(/uuldana: stopped gemini \(Gemini CLI\) with its exit keys after \d+s/.test(output), "SIGTERM stops Gemini with its exit keys");
  // the session's history, as a user would read it after such a run
  const id = sessionOf(dirs.UULDANA_DATA_DIR)?.id;
  if (process.env.UULDANA_REAL_TRANSCRIPT && id) {
    writeFileSync(process.env.UULDANA_REAL_TRANSCRIPT, `${output}\n$ uuldana sessions show ${id}\n${uuldana(root, dirs, ["sessions", "show", id]).stdout}`);
  }
  checkJournal(root, dirs, say);
  checkSources(root, dirs, say, removed);
  checkRests(root, dirs, api, say);
  await checkTerminalUsable(terminal, say);
}

function checkJournal(root, dirs, say) {
  const id = sessionOf(dirs.UULDANA_DATA_DIR)?.id;
  const show = id ? uuldana(root, dirs, ["sessions", "show", id, "--json"]) : undefined;
  const events = show?.status === 0 ? JSON.parse(show.stdout) : [];
  const runs = events.filter((event) => event.type === "run-start").map((event) => event.entry);
  say(JSON.stringify(runs) === JSON.stringify(CHAIN), `sessions show --json has the runs ${CHAIN.join(" → ")} in order`, `${JSON.stringify(runs)}\n${show?.stderr ?? "no session"}`);
  for (const entry of CHAIN.slice(0, 2)) {
    const end = events.find((event) => event.type === "run-end" && event.entry === entry);
    say(end?.stopped_by === "keys", `${entry} was left at its limit screen with its exit keys (stopped by ${end?.stopped_by ?? "nothing"})`);
  }
  // Claude Code's refusal is also in its own session file: the one limit event is native, with the printed text
  const claude = events.filter((event) => event.type === "limit" && event.entry === "claude-code");
  say(claude.length === 1 && claude[0].source === "native" && /hit your/i.test(claude[0].text ?? ""), "Claude Code's limit is one native event, read from its own session file, with the printed text", JSON.stringify(claude));
}

// Each earlier turn, as its words, exactly once in the next agent's first request (the body it sent its API), and in
// the order it was said; nothing uuldana typed or an agent's chrome.
function checkOnce(say, to, body, turns) {
  const text = handedText(body ?? "");
  const counts = turns.map((turn) => (body ?? "").split(turn).length - 1);
  say(counts.every((count) => count === 1), `the first request to ${to} holds each earlier turn exactly once`, turns.map((turn, i) => `${counts[i]}× ${turn}`).join("\n"));
  // the last request is quoted at the top, the others follow in order below it
  const places = turns.slice(0, -1).map((turn) => text.indexOf(turn, text.indexOf("\n\n---")));
  say(places.every((place, i) => place !== -1 && (i === 0 || place > places[i - 1])), `the turns handed to ${to} are in the order they were said`, places.join(", "));
  for (const typed of ["/exit", "/quit", "? for shortcuts", "Goodbye", "Welcome", "Tip:"]) say(!text.includes(typed), `the handoff to ${to} has no "${typed}"`, text.slice(0, 900));
}

// The conversation the third agent gets from Claude Code's and Codex's own files: each turn once, labelled.
function fromTranscripts() {
  return [
    "--- Claude Code (claude-code), from its transcript ---",
    `User: ${ASK[0]}`,
    "",
    `Claude Code: ${ANSWER["claude-code"]}`,
    "",
    `User: ${ASK[1]}`,
    "",
    "--- Codex CLI (codex), from its transcript ---",
    `Codex CLI: ${ANSWER.codex}`,
    "",
    "User: (the user's last request, quoted at the top)",
  ];
}

// The preamble the third agent gets, quoting the user's last request.
function geminiPreamble() {
  return [
    "You are continuing a conversation from Codex CLI (codex), whose usage allowance ran out; before it, Claude Code (claude-code) took part. " +
      "Below is the conversation so far, each turn once and in order, labelled with who said it: from the agents' own transcripts where uuldana could read them, else as their screens showed it. " +
      "Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over: check the state of the files before relying on them.",
    "",
    `Continue with the user's last request, quoted here whole:\n\n> ${ASK[2]}`,
  ].join("\n");
}

// sessions show names where each run's part came from; the sizes of the prompts and the times the transcripts took
// are printed for the record.
function checkSources(root, dirs, say, removed) {
  const id = sessionOf(dirs.UULDANA_DATA_DIR)?.id;
  const show = id ? uuldana(root, dirs, ["sessions", "show", id]).stdout : "";
  for (const entry of CHAIN.slice(0, 2)) {
    const line = show.split("\n").find((l) => l.includes(`${entry}'s conversation, from`)) ?? "";
    const screen = removed === entry;
    const expected = screen ? `${entry}'s conversation, from its screen (its transcript could not be found or read)` : `${entry}'s conversation, from its own transcript (`;
    say(line.includes(expected), `sessions show says ${entry}'s part came from its ${screen ? "screen, its transcript gone" : "own transcript"}`, line || show);
  }
  const folder = id ? join(dirs.UULDANA_DATA_DIR, "sessions", id) : "";
  const sizes = id ? readdirSync(folder).filter((name) => /^prompt-\d+\.txt$/.test(name)).map((name) => `${name} ${Buffer.byteLength(readFileSync(join(folder, name), "utf8"))} bytes`) : [];
  const reads = id ? readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((event) => event.type === "conversation" && event.read_ms !== undefined).map((event) => `${event.entry} ${event.source} ${event.read_ms} ms`) : [];
  console.log(`     (prompts: ${sizes.join(", ")}; transcript reads: ${reads.join(", ")})`);
}

// Codex's rollout files under its home.
function rollouts(home) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (/^rollout-.*\.jsonl$/.test(entry.name)) found.push(join(dir, entry.name));
    }
  };
  walk(join(home, "sessions"));
  return found;
}

function checkRests(root, dirs, api, say) {
  const list = uuldana(root, dirs, ["cooldowns", "list", "--json"]);
  const rows = list.status === 0 ? JSON.parse(list.stdout) : [];
  for (const entry of CHAIN.slice(0, 2)) {
    const row = rows.find((r) => r.entry === entry);
    const off = row ? Math.abs(new Date(row.until).getTime() / 1000 - api.resets[entry]) : Infinity;
    say(off <= 120, `cooldowns list --json: ${entry} rests until the reset the server gave, within 2 minutes (${row?.until ?? "not resting"})`, list.stdout + list.stderr);
  }
  say(!rows.some((r) => r.entry === "gemini"), "gemini is not resting");
}

async function checkTerminalUsable(terminal, say) {
  const { before, after } = await terminal.settings();
  say(before !== undefined && before === after, "the terminal settings are as before", `${before}\n${after}`);
  await terminal.waitFor(() => /^waiting for a line/m.test(terminal.plainOutput()), 5000);
  terminal.write("still usable\r");
  const echoed = await terminal.waitFor(() => /^read: still usable/m.test(terminal.plainOutput()), 5000);
  say(echoed, "the terminal takes a typed line afterwards");
}

// The handoff prompt as the next CLI sent it to its API: the string in the request that begins with the preamble.
function handedText(body) {
  const found = [];
  const walk = (value) => {
    if (typeof value === "string") {
      if (value.startsWith("You are continuing a conversation")) found.push(value);
    } else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  try {
    walk(JSON.parse(body));
  } catch {
    return "";
  }
  return found[0] ?? "";
}

// The one session in the data dir: its id and journal events, read directly while it runs.

function uuldana(root, dirs, args) {
  return spawnSync(process.execPath, [join(root, "dist", "core", "cli", "main.js"), ...args], { encoding: "utf8", env: { ...process.env, ...dirs }, timeout: 20_000 });
}

// config.json: the three entries in order, each pointed at the loopback server with a throwaway home, one cwd.
function writeConfig(configDir, base, cwd) {
  const providers = CHAIN.map((id) => {
    const setup = harnesses[id].setup({ base, cwd });
    return { id, env: setup.env, args: setup.args };
  });
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, "config.json"), JSON.stringify({ providers, auto_detect: false, failover: true }, null, 2));
  return Object.fromEntries(providers.map((entry) => [entry.id, entry.env]));
}

// One server on loopback for the three vendors, told apart by path. It keeps the handoff prompt each CLI sent
// (the first string in its requests that begins with the preamble); its answer depends on the user's newest message.
async function startLoopbackApi() {
  const now = Math.floor(Date.now() / 1000);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      api.log.push(`${req.method} ${req.url} (${body.length} bytes)`);
      answer(api, req, res, body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const api = {
    base: `http://127.0.0.1:${server.address().port}`,
    log: [],
    handed: {},
    // the whole first request that carried each handoff
    bodies: {},
    limited: new Set(),
    resets: { "claude-code": now + RESET_IN["claude-code"], codex: now + RESET_IN.codex },
    close() {
      server.close();
      server.closeAllConnections();
    },
  };
  return api;
}

function answer(api, req, res, body) {
  const url = req.url ?? "";
  if (req.method !== "POST") {
    res.writeHead(200);
    return res.end();
  }
  const keep = (id) => {
    api.handed[id] ??= handedText(body) || undefined;
    if (api.handed[id] !== undefined) api.bodies[id] ??= body;
  };
  if (url.startsWith("/v1/messages")) {
    if (body.includes(ASK[1])) return limit(api, "claude-code", res);
    return anthropicAnswer(res, body.includes(ASK[0]) ? ANSWER["claude-code"] : "Lighthouse question");
  }
  if (url.startsWith("/v1/responses")) {
    keep("codex");
    if (body.includes(ASK[2])) return limit(api, "codex", res);
    return responsesAnswer(res, ANSWER.codex);
  }
  if (url.startsWith("/v1beta/models/")) {
    // the main conversation streams; a plain generateContent call is Gemini's model router, which wants JSON
    const stream = url.includes(":streamGenerateContent");
    if (stream) keep("gemini");
    return geminiAnswer(res, stream ? ANSWER.gemini : JSON.stringify({ reasoning: "a short question", model_choice: "flash" }), { stream });
  }
  res.writeHead(404, { "content-type": "application/json" });
  res.end("{}");
}

function limit(api, id, res) {
  api.limited.add(id);
  LIMIT_REPLIES[id](res, api.resets[id]);
}
