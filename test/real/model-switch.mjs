// The in-place model switch with the real Gemini CLI: "uuldana run" with an entry that has "switch_models": true starts
// it on gemini-2.5-pro against a loopback stand-in of Gemini's API, which refuses that model with a per-day quota
// error. Gemini draws its quota dialog; uuldana must leave it with its Stop choice, switch with "/model set
// gemini-2.5-flash", see the switch on the screen, ask the agent to go on, and see flash answer — no failover, the
// pro model resting on its own with the entry still able to run.
import { spawnSync } from "node:child_process";
import http from "node:http";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

import { harnesses } from "./harness.mjs";
import { sessionOf, stopSession } from "./session.mjs";
import { startTerminal } from "./terminal.mjs";
import { geminiAnswer, listenOnLoopback } from "./vendor-api.mjs";

const ASK = "Which colour is the lighthouse on the north pier?";
const FLASH_ANSWER = "On flash: the lighthouse on the north pier is painted saffron yellow.";
const FROM = "gemini-2.5-pro";
const TO = "gemini-2.5-flash";

export async function checkModelSwitch({ root, bins, detections, env, check }) {
  if (!detections.get("gemini")?.path) {
    check(false, "model switch: gemini installed");
    return;
  }
  const started = Date.now();
  const api = await startApi();
  const folder = mkdtempSync(join(tmpdir(), "uuldana-real-switch-"));
  const cwd = mkdtempSync(join(tmpdir(), "uuldana-real-switch-cwd-"));
  const dirs = { UULDANA_CONFIG_DIR: join(folder, "config"), UULDANA_DATA_DIR: join(folder, "data"), UULDANA_CACHE_DIR: join(folder, "cache") };
  const setup = harnesses.gemini.setup({ base: api.base, cwd });
  mkdirSync(dirs.UULDANA_CONFIG_DIR, { recursive: true });
  const entry = { id: "gemini", env: setup.env, args: [...setup.args, "--model", FROM], switch_models: true };
  writeFileSync(join(dirs.UULDANA_CONFIG_DIR, "config.json"), JSON.stringify({ providers: [entry], auto_detect: false }, null, 2));
  const terminal = startTerminal({ root, cwd, cols: 120, rows: 40, env: { ...env, ...dirs, TERM: "xterm-256color", PATH: `${bins}${delimiter}${env.PATH}` } });
  const say = (ok, text, detail = "") => check(ok, `model switch: ${text}`, ok ? "" : `${detail}\n--- last screen lines ---\n${terminal.lines().filter((l) => l.trim()).slice(-14).join("\n")}`);
  try {
    const up = await terminal.waitFor(() => /Type your message/.test(terminal.text()), 40_000);
    say(up, "the real Gemini CLI starts under uuldana run on gemini-2.5-pro");
    if (!up) return;
    await terminal.type(ASK);
    // Gemini names the family of the model it was started on: "Usage limit reached for all Pro models."
    const refused = await terminal.waitFor(() => /Usage limit reached for all Pro models/.test(terminal.text()), 30_000);
    say(refused, "Gemini shows its quota dialog for the Pro models");
    const answered = await terminal.waitFor(() => terminal.text().includes(FLASH_ANSWER), 60_000);
    say(answered, "after the switch, gemini-2.5-flash answers in the same Gemini CLI");
    // the switch counts once the agent has gone quiet after its answer, and the rest is written then
    await terminal.waitFor(() => (sessionOf(dirs.UULDANA_DATA_DIR)?.events ?? []).some((event) => event.type === "cooldown"), 20_000);
    const events = sessionOf(dirs.UULDANA_DATA_DIR)?.events ?? [];
    const switched = events.find((event) => event.type === "switched");
    say(switched?.from === FROM && switched?.to === TO, "the journal records the switch with both models", JSON.stringify(events.filter((event) => /switch|limit/.test(event.type))));
    say(!events.some((event) => event.type === "limit" || event.type === "handoff-from"), "no failover and no limit of the entry");
    say(api.flash.some((body) => body.includes("Please continue with the last request")), "Gemini's request to gemini-2.5-flash carries uuldana's line to go on", `requests to flash: ${api.flash.length}`);
    const list = spawnSync(process.execPath, [join(root, "dist", "core", "cli", "main.js"), "cooldowns", "list", "--json"], { encoding: "utf8", env: { ...process.env, ...dirs } });
    const rows = list.status === 0 ? JSON.parse(list.stdout) : [];
    say(rows.length === 1 && rows[0].entry === `gemini@${FROM}` && rows[0].model === FROM && rows[0].kind === "per-model", "only gemini-2.5-pro rests, as gemini@gemini-2.5-pro", list.stdout + list.stderr);
  } finally {
    await stopSession(dirs.UULDANA_DATA_DIR, terminal);
    await terminal.close();
    api.close();
  }
  console.log(`     (model switch took ${Math.round((Date.now() - started) / 1000)}s)`);
}

// Gemini's API: the router's plain generateContent answered with JSON, gemini-2.5-pro refused with the per-day quota
// error, gemini-2.5-flash answering; the bodies of the requests to flash are kept.
async function startApi() {
  const api = { flash: [] };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const url = req.url ?? "";
      if (req.method !== "POST" || !url.startsWith("/v1beta/models/")) {
        res.writeHead(req.method === "POST" ? 404 : 200, { "content-type": "application/json" });
        return res.end("{}");
      }
      const stream = url.includes(":streamGenerateContent");
      if (!stream) return geminiAnswer(res, JSON.stringify({ reasoning: "a short question", model_choice: "flash" }), { stream });
      if (url.startsWith(`/v1beta/models/${FROM}:`)) return quotaError(res);
      if (url.startsWith(`/v1beta/models/${TO}:`)) api.flash.push(body);
      return geminiAnswer(res, FLASH_ANSWER, { stream });
    });
  });
  return Object.assign(api, await listenOnLoopback(server));
}

// The per-day quota of one model used up: Gemini CLI shows its quota dialog for that model.
function quotaError(res) {
  res.writeHead(429, { "content-type": "application/json" });
  const violation = { quotaMetric: "generativelanguage.googleapis.com/generate_content_requests", quotaId: "GenerateRequestsPerDayPerProjectPerModel" };
  res.end(
    JSON.stringify({
      error: {
        code: 429,
        message: "Quota exceeded for quota metric 'Generate Content API requests per day' and limit 'GenerateRequestsPerDayPerProjectPerModel' of service 'generativelanguage.googleapis.com' for consumer 'project_number:0'.",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [violation] }],
      },
    }),
  );
}
