// Rotation before the wall, with the real Claude Code: "uuldana run" with "rotate_at_percent_left": 5 starts it on a
// loopback stand-in of Anthropic's API whose answer says 97% of the five-hour window is used; Claude Code feeds its
// status line (uuldana's relay) those numbers after the answer, and uuldana must move the conversation to the real
// Codex CLI at Claude's next idle prompt, with a native event and the stand-in's exact reset.
import { spawnSync } from "node:child_process";
import http from "node:http";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

import { harnesses } from "./harness.mjs";
import { sessionOf, stopSession } from "./session.mjs";
import { startTerminal } from "./terminal.mjs";
import { anthropicAnswer, listenOnLoopback, responsesAnswer } from "./vendor-api.mjs";

const CHAIN = ["claude-code", "codex"];
const ASK = "Which colour is the lighthouse on the north pier?";
const ANSWER = "The lighthouse on the north pier is painted saffron yellow.";
const CODEX_ANSWER = "Codex picked up the lighthouse question.";

export async function checkRotation({ root, bins, detections, env, check }) {
  const missing = CHAIN.filter((id) => !detections.get(id)?.path);
  if (missing.length) {
    check(false, `rotation: ${missing.join(", ")} installed`);
    return;
  }
  const started = Date.now();
  // the five-hour window resets in 2 h 13 min, to the second: the rest must end exactly then
  const reset = Math.floor(Date.now() / 1000) + 2 * 3600 + 13 * 60;
  const api = await startApi(reset);
  const folder = mkdtempSync(join(tmpdir(), "uuldana-real-rotate-"));
  const cwd = mkdtempSync(join(tmpdir(), "uuldana-real-rotate-cwd-"));
  const dirs = { UULDANA_CONFIG_DIR: join(folder, "config"), UULDANA_DATA_DIR: join(folder, "data"), UULDANA_CACHE_DIR: join(folder, "cache") };
  const providers = CHAIN.map((id) => {
    const setup = harnesses[id].setup({ base: api.base, cwd });
    return { id, env: setup.env, args: setup.args };
  });
  mkdirSync(dirs.UULDANA_CONFIG_DIR, { recursive: true });
  writeFileSync(join(dirs.UULDANA_CONFIG_DIR, "config.json"), JSON.stringify({ providers, auto_detect: false, rotate_at_percent_left: 5 }, null, 2));
  const terminal = startTerminal({ root, cwd, cols: 120, rows: 40, env: { ...env, ...dirs, TERM: "xterm-256color", PATH: `${bins}${delimiter}${env.PATH}` } });
  const say = (ok, text, detail = "") => check(ok, `rotation: ${text}`, ok ? "" : `${detail}\n--- last screen lines ---\n${terminal.lines().filter((l) => l.trim()).slice(-12).join("\n")}`);
  try {
    const up = await terminal.waitFor(() => /\? for shortcuts|^ *❯/m.test(terminal.text()), 40_000);
    say(up, "the real Claude Code starts under uuldana run");
    if (!up) return;
    await terminal.type(ASK);
    const answered = await terminal.waitFor(() => terminal.text().includes(ANSWER), 30_000);
    say(answered, "Claude Code shows the answer, sent with 97% of its five-hour window used");
    const handed = await terminal.waitFor(() => api.handed !== undefined, 60_000);
    say(handed, "at Claude Code's idle prompt, uuldana moves the conversation to the real Codex CLI");
    if (!handed) return;
    say(api.handed.includes(ANSWER) && api.handed.includes("which was rotated before its usage allowance ran out"), "Codex's first request says Claude Code was rotated, with its answer", api.handed.slice(0, 800));
    const events = sessionOf(dirs.UULDANA_DATA_DIR)?.events ?? [];
    const limit = events.find((event) => event.type === "limit");
    say(limit?.source === "native" && limit?.reason === "rotate", "the journal's limit event is native, reason rotate", JSON.stringify(limit));
    say(limit?.reset_at === new Date(reset * 1000).toISOString(), "with the stand-in's exact reset", `${limit?.reset_at} vs ${new Date(reset * 1000).toISOString()}`);
    say(events.some((event) => event.type === "quota" && event.entry === "claude-code"), "Claude Code's own reading is in the journal");
    const list = spawnSync(process.execPath, [join(root, "dist", "core", "cli", "main.js"), "cooldowns", "list", "--json"], { encoding: "utf8", env: { ...process.env, ...dirs } });
    const row = list.status === 0 ? JSON.parse(list.stdout).find((r) => r.entry === "claude-code") : undefined;
    say(row?.until === new Date(reset * 1000).toISOString(), "claude-code rests until the window's reset", list.stdout + list.stderr);
  } finally {
    await stopSession(dirs.UULDANA_DATA_DIR, terminal);
    await terminal.close();
    api.close();
  }
  console.log(`     (rotation took ${Math.round((Date.now() - started) / 1000)}s)`);
}

// Anthropic's API answering with the unified rate-limit headers of a 97%-used five-hour window, and the Responses
// API keeping the first request that carries the handoff.
async function startApi(reset) {
  const api = { handed: undefined };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (req.method !== "POST") {
        res.writeHead(200);
        return res.end();
      }
      if ((req.url ?? "").startsWith("/v1/messages")) {
        return anthropicAnswer(res, body.includes(ASK) ? ANSWER : "Lighthouse question", {
          "anthropic-ratelimit-unified-status": "allowed_warning",
          "anthropic-ratelimit-unified-reset": String(reset),
          "anthropic-ratelimit-unified-representative-claim": "five_hour",
          "anthropic-ratelimit-unified-5h-status": "allowed_warning",
          "anthropic-ratelimit-unified-5h-utilization": "0.97",
          "anthropic-ratelimit-unified-5h-reset": String(reset),
          "anthropic-ratelimit-unified-7d-status": "allowed",
          "anthropic-ratelimit-unified-7d-utilization": "0.40",
          "anthropic-ratelimit-unified-7d-reset": String(reset + 4 * 86400),
        });
      }
      if ((req.url ?? "").startsWith("/v1/responses")) {
        if (body.includes("You are continuing a conversation")) api.handed ??= body;
        return responsesAnswer(res, CODEX_ANSWER);
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  return Object.assign(api, await listenOnLoopback(server));
}
