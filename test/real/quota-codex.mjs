// The real Codex CLI's own account of its allowance, read back by its adapter: a server on loopback plays the
// Responses API and sends, with each answer, the rate-limit headers the real API sends (x-codex-primary-used-percent,
// -window-minutes, -reset-at, the same for secondary, x-codex-credits-*); Codex, under uuldana's host, answers a
// first prompt, and then meets its usage limit (a 429 with the same headers, the 5-hour window full). The quota hook
// must give exactly the server's numbers and resets, and then the allowance gone with the 5-hour window's reset.
import { existsSync, watch } from "node:fs";
import http from "node:http";
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";

import { harnesses } from "./harness.mjs";
import { startHosted, waitOnScreen } from "./host.mjs";
import { listenOnLoopback, responsesAnswer } from "./vendor-api.mjs";

const ASK = ["Which colour is the harbour light?", "And the breakwater light?"];
const ANSWER = "The harbour light is emerald green.";
const LIMITED = /hit your usage limit/;
// the server's numbers: a used share with a fraction, the 5-hour and weekly windows, resets some hours and days away
const PRIMARY = { used: 37.5, minutes: 300, resetIn: 2 * 3600 + 13 * 60 };
const SECONDARY = { used: 61, minutes: 10_080, resetIn: 3 * 86_400 + 7 * 3600 };

export async function checkQuota({ root, detections, env, check }) {
  const bin = detections.get("codex")?.path;
  if (!bin) {
    check(false, "codex quota: codex installed");
    return;
  }
  const { default: adapter } = await import(join(root, "dist", "providers", "codex.js"));
  const now = Math.floor(Date.now() / 1000);
  const reset = { primary: now + PRIMARY.resetIn, secondary: now + SECONDARY.resetIn };
  const api = await startApi(reset);
  const say = (ok, text, detail) => check(ok, `codex quota: ${text}`, ok ? "" : detail);
  try {
    const setup = harnesses.codex.setup({ base: api.base });
    const started = new Date();
    const query = { cwd: setup.cwd, env: setup.env, started, sessionId: undefined, feed: undefined };
    const run = await startHosted({ root, id: "codex", bin, env, setup: { ...setup, args: [ASK[0]] } });
    try {
      const answered = await waitOnScreen(run, (text) => text.includes(ANSWER), 40_000);
      const shown = async () => (await run.screen.read()).visible.filter((line) => line.trim()).slice(-10).join("\n");
      say(answered, "the real Codex answered with the server's rate-limit headers", await shown());
      const reading = await settled(() => adapter.quota(query), (value) => value?.windows?.length > 0);
      const windows = [
        { name: "primary", usedPercent: PRIMARY.used, resetsAt: iso(reset.primary), windowMinutes: PRIMARY.minutes },
        { name: "secondary", usedPercent: SECONDARY.used, resetsAt: iso(reset.secondary), windowMinutes: SECONDARY.minutes },
      ];
      say(isDeepStrictEqual(reading, { windows }), "the hook reads the server's exact windows and resets from the rollout", JSON.stringify(reading ?? null));
      const watched = adapter.quotaFiles(query);
      const file = adapter.transcript({ ...query, ended: new Date(), prompt: ASK[0] })?.file;
      say(file !== undefined && watched.includes(dirname(file)) && watched.includes(file), "the files to watch hold the rollout's folder and the rollout", JSON.stringify({ watched, file }));
      // what uuldana does with them: a watch on each that exists (one that does not is waited for through the folder
      // above it), which Codex's next token count must wake
      const woken = new Set();
      const watchers = watched.filter((path) => existsSync(path)).map((path) => watch(path, () => woken.add(path)));

      await new Promise((r) => setTimeout(r, 800));
      run.agent.write(ASK[1]);
      await new Promise((r) => setTimeout(r, 400));
      run.agent.write("\r");
      const limited = await waitOnScreen(run, (text) => LIMITED.test(text), 30_000);
      say(limited, "the real Codex met its usage limit", await shown());
      const gone = await settled(() => adapter.quota(query), (value) => value?.exhausted !== undefined);
      for (const watcher of watchers) watcher.close();
      say(file !== undefined && woken.has(file) && woken.has(dirname(file)), "Codex's writing at the limit woke the watches on the rollout and its folder", JSON.stringify([...woken]));
      const full = [{ ...windows[0], usedPercent: 100 }, windows[1]];
      say(isDeepStrictEqual(gone?.windows, full), "after the limit the hook reads the full 5-hour window", JSON.stringify(gone ?? null));
      const { kind, reset_at: resetAt, text } = gone?.exhausted ?? {};
      say(kind === "session" && resetAt === iso(reset.primary), "the allowance is gone, a session limit with the server's exact reset", JSON.stringify(gone?.exhausted ?? null));
      say(typeof text === "string" && LIMITED.test(text), "Codex's own words for the limit come with it", JSON.stringify(text ?? null));
    } finally {
      await run.stop();
      await run.result;
    }
  } finally {
    api.close();
  }
}

// --- internal ---

function iso(seconds) {
  return new Date(seconds * 1000).toISOString();
}

// Calls read until its value passes test (Codex writes its rollout a moment after it draws), for at most 5 s.
async function settled(read, test) {
  const deadline = Date.now() + 5000;
  let value = read();
  while (!test(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    value = read();
  }
  return value;
}

// The rate-limit headers of one response: the 5-hour window at a used share, the weekly one, no credits.
function limitHeaders(reset, primaryUsed) {
  return {
    "x-codex-primary-used-percent": String(primaryUsed),
    "x-codex-primary-window-minutes": String(PRIMARY.minutes),
    "x-codex-primary-reset-at": String(reset.primary),
    "x-codex-secondary-used-percent": String(SECONDARY.used),
    "x-codex-secondary-window-minutes": String(SECONDARY.minutes),
    "x-codex-secondary-reset-at": String(reset.secondary),
    "x-codex-credits-has-credits": "false",
    "x-codex-credits-unlimited": "false",
    "x-codex-credits-balance": "0",
  };
}

// The Responses API on loopback: the first question gets its answer with the headers; the second the usage limit,
// the 5-hour window full and reached; the request for a title a title.
async function startApi(reset) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/responses")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("{}");
      }
      let input = [];
      try {
        input = JSON.parse(Buffer.concat(chunks).toString("utf8")).input ?? [];
      } catch {
        // answered as a first question
      }
      const asked = input.filter((item) => item.role === "user").map((item) => JSON.stringify(item.content)).at(-1) ?? "";
      if (asked.includes("Generate a concise")) return responsesAnswer(res, "Harbour lights");
      if (asked.includes(ASK[1])) {
        res.writeHead(429, { "content-type": "application/json", ...limitHeaders(reset, 100), "x-codex-rate-limit-reached-type": "rate_limit_reached" });
        const body = { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "plus", resets_at: reset.primary, resets_in_seconds: reset.primary - Math.floor(Date.now() / 1000) };
        return res.end(JSON.stringify({ error: body }));
      }
      for (const [name, value] of Object.entries(limitHeaders(reset, PRIMARY.used))) res.setHeader(name, value);
      return responsesAnswer(res, ANSWER);
    });
  });
  return listenOnLoopback(server);
}
