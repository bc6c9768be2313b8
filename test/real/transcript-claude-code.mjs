// The real Claude Code's own transcript, offline: a server on loopback plays the Messages API, the real CLI holds a
// conversation under uuldana's host (a question answered after a tool call, then one refused at the plan limit),
// and the adapter's transcript hook must read exactly those turns from the file the CLI wrote under the session id
// uuldana chose; a second run with the CLI's own --continue appends to that file, and the hook must read only its
// part. The working directory's name has dots, underscores, letters outside ASCII and is past 200 characters.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { harnesses } from "./harness.mjs";
import { openBuiltIn, startHosted, waitOnScreen } from "./host.mjs";
import { LIMIT_REPLIES, anthropicAnswer } from "./vendor-api.mjs";

const ID = "claude-code";
const ASK = ["Which colour is the lighthouse on the south mole?", "And how far does its light reach?", "Who keeps it lit?"];
const BEFORE_TOOL = "Let me read the harbour notes.";
const ANSWER = ["The notes say the south mole lighthouse is painted teal.", "A keeper from the harbour office keeps it lit."];
const TOOL = "toolu_transcript_read";

export async function checkTranscript({ root, detections, env, check }) {
  const bin = detections.get(ID)?.path;
  if (!bin) {
    check(false, `${ID} transcript: the real CLI is installed`);
    return;
  }
  const { manifest, hooks, problems } = await openBuiltIn(root, ID);
  const top = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-real-transcript-")));
  const cwd = join(top, "harbour.notes_v2 ünï", ...[1, 2, 3, 4].map((i) => `quay_${i}.${"x".repeat(40)}`));
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, "notes.txt"), "The south mole lighthouse is teal.\n");
  const api = await startApi(join(cwd, "notes.txt"));
  const setup = harnesses[ID].setup({ base: api.base, cwd });
  const runEnv = { ...env, TERM: "xterm-256color", ...setup.env };
  const say = (ok, text, detail = "") => check(ok, `${ID} transcript: ${text}`, ok ? "" : `${detail}${detail ? "\n" : ""}--- loopback requests ---\n${api.log.slice(-6).join("\n")}`);
  try {
    // the first run, under the session id uuldana chooses
    const id = randomUUID();
    const idArgs = manifest.session_id.args.map((arg) => arg.replaceAll("{id}", id));
    const first = await converse({ root, bin, env, setup: { ...setup, args: [...setup.args, ...idArgs] }, api, asks: [ASK[0], ASK[1]], expect: [ANSWER[0], /hit your/] });
    say(first.ok, "the real CLI answers the first question and meets its limit at the second", first.shown);
    if (!first.ok) return;
    const started = performance.now();
    const read = hooks.transcript({ cwd, env: runEnv, started: first.started, ended: first.ended, sessionId: id, prompt: undefined });
    const ms = Math.round(performance.now() - started);
    const turns = [
      { role: "user", text: ASK[0] },
      { role: "agent", text: BEFORE_TOOL },
      { role: "tool", text: "Read: notes.txt" },
      { role: "agent", text: ANSWER[0] },
      { role: "user", text: ASK[1] },
    ];
    say(read?.file.startsWith(join(setup.env.HOME, ".claude", "projects", "")) && read.file.endsWith(`/${id}.jsonl`), `the CLI wrote its file under the session id uuldana gave (read in ${ms} ms)`, read?.file ?? "no file");
    say(JSON.stringify(read?.turns) === JSON.stringify(turns), "the hook reads exactly the run's turns: no thinking, tool output or limit message", JSON.stringify(read?.turns));
    const written = read ? readFileSync(read.file, "utf8") : "";
    say(/"isApiErrorMessage":true/.test(written) && /"error":"rate_limit"/.test(written), "the file holds the limit as an API error entry, which the hook left out");

    // the second run: the CLI's own --continue, no id of uuldana's; the file of the first run gets this run's turns
    const second = await converse({ root, bin, env, setup: { ...setup, args: [...setup.args, ...manifest.resume.args] }, api, asks: [ASK[2]], expect: [ANSWER[1]] });
    say(second.ok, "the real CLI continued with --continue answers the third question", second.shown);
    if (!second.ok) return;
    const resumed = hooks.transcript({ cwd, env: runEnv, started: second.started, ended: second.ended, sessionId: undefined, prompt: undefined });
    say(resumed?.file === read?.file, "after --continue the hook finds the same file, by the folder and the run's time", resumed?.file ?? "no file");
    say(JSON.stringify(resumed?.turns) === JSON.stringify([{ role: "user", text: ASK[2] }, { role: "agent", text: ANSWER[1] }]), "after --continue the hook reads only this run's turns", JSON.stringify(resumed?.turns));
    say(problems.length === 0, "the hook was never turned off", JSON.stringify(problems));
  } finally {
    api.close();
  }
}

// --- internal ---

// One run of the real CLI under uuldana's host: each question typed once the screen shows the answer to the last,
// then its exit keys; when it started and ended, and the screen's last lines when a step failed.
async function converse({ root, bin, env, setup, asks, expect }) {
  const run = await startHosted({ root, id: ID, bin, env, setup });
  const started = new Date();
  const screen = async () => (await run.screen.read()).visible.join("\n");
  const waitFor = (test, ms) => waitOnScreen(run, test, ms);
  let ok = await waitFor((text) => /\? for shortcuts/.test(text), 40_000);
  for (const [i, ask] of asks.entries()) {
    if (!ok) break;
    await new Promise((r) => setTimeout(r, 500));
    run.agent.write(ask);
    await new Promise((r) => setTimeout(r, 400));
    run.agent.write("\r");
    const wanted = expect[i];
    ok = await waitFor((text) => (typeof wanted === "string" ? text.includes(wanted) : wanted.test(text)) && !/esc to interrupt/i.test(text), 30_000);
  }
  const shown = (await screen()).split("\n").filter((line) => line.trim()).slice(-10).join("\n");
  await run.stop();
  await run.result;
  return { ok, shown, started, ended: new Date() };
}

// The Messages API on loopback: the first question gets a thought, a sentence and a Read of the notes, its result the
// answer; the second question the plan-limit error; the third an answer; anything else a short one.
async function startApi(notes) {
  const log = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      log.push(`${req.method} ${req.url} ${body.slice(0, 160)}`);
      if (req.method !== "POST") {
        res.writeHead(200);
        res.end();
        return;
      }
      let request = {};
      try {
        request = JSON.parse(body);
      } catch {
        // answered below
      }
      const last = (request.messages ?? []).filter((message) => message.role === "user").at(-1);
      const parts = typeof last?.content === "string" ? [{ type: "text", text: last.content }] : (last?.content ?? []);
      const said = parts.filter((part) => part.type === "text" && !part.text.startsWith("<system-reminder>")).at(-1)?.text ?? "";
      if (parts.some((part) => part.type === "tool_result" && part.tool_use_id === TOOL)) anthropicAnswer(res, ANSWER[0]);
      else if (said.includes(ASK[0])) toolCall(res, notes);
      else if (said.includes(ASK[1])) LIMIT_REPLIES[ID](res, Math.floor(Date.now() / 1000) + 5400);
      else if (said.includes(ASK[2])) anthropicAnswer(res, ANSWER[1]);
      else anthropicAnswer(res, "Noted.");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, log, close: () => server.close() };
}

// A streamed answer that thinks, says a sentence and asks for a Read of the notes.
function toolCall(res, notes) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const usage = { input_tokens: 12, output_tokens: 1 };
  const events = [
    ["message_start", { type: "message_start", message: { id: "msg_transcript", type: "message", role: "assistant", model: "claude-loopback", content: [], stop_reason: null, stop_sequence: null, usage } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "The notes file will say." } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "bG9vcGJhY2s=" } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: BEFORE_TOOL } }],
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    ["content_block_start", { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: TOOL, name: "Read", input: {} } }],
    ["content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: JSON.stringify({ file_path: notes }) } }],
    ["content_block_stop", { type: "content_block_stop", index: 2 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 12 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  res.end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(""));
}
