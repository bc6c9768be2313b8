// The real Claude Code's own quota numbers, offline: a server on loopback plays the Messages API and sends the
// subscription's utilization headers with each answer; the real CLI, started with the settings the adapter gives the
// run (--settings), runs uuldana's status-line relay after each answer, and the relay's feed must hold the server's
// exact numbers while the user's own status-line command still runs and shows on Claude's screen. The second
// question is refused at the plan limit, which the CLI records in its session file: the adapter's quota hook must
// read it as the allowance gone, with the server's reset.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { harnesses } from "./harness.mjs";
import { openBuiltIn, startHosted, waitOnScreen } from "./host.mjs";
import { LIMIT_REPLIES, anthropicAnswer } from "./vendor-api.mjs";

const ID = "claude-code";
const ASK = ["Which colour is the lighthouse on the south mole?", "And how far does its light reach?"];
const ANSWER = "The south mole lighthouse is painted teal.";
// the user's own status line: a shell command with quotes, a substitution and a case over its input
const OWN_COMMAND = `input=$(cat); case "$input" in *'"five_hour"'*) echo "keeper's line: 5h seen";; *) echo "keeper's line: waiting";; esac`;
const OWN_SHOWN = "keeper's line: 5h seen";

export async function checkQuota({ root, detections, env, check }) {
  const bin = detections.get(ID)?.path;
  if (!bin) {
    check(false, `${ID} quota: the real CLI is installed`);
    return;
  }
  const { manifest, hooks, problems } = await openBuiltIn(root, ID);
  const top = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-real-quota-")));
  const cwd = join(top, "harbour");
  const session = join(top, "session");
  mkdirSync(cwd);
  mkdirSync(session, { mode: 0o700 });
  const now = Math.floor(Date.now() / 1000);
  const numbers = { five: 97, fiveReset: now + 2 * 3600 + 17, week: 41, weekReset: now + 3 * 86_400 + 29, limitReset: now + 5400 };
  const api = await startApi(numbers);
  const setup = harnesses[ID].setup({ base: api.base, cwd });
  const runEnv = { ...env, TERM: "xterm-256color", ...setup.env };
  const userSettings = join(setup.env.HOME, ".claude", "settings.json");
  mkdirSync(join(setup.env.HOME, ".claude"), { recursive: true });
  const userText = `${JSON.stringify({ statusLine: { type: "command", command: OWN_COMMAND, padding: 0 }, spinnerTipsEnabled: false }, null, 2)}\n`;
  writeFileSync(userSettings, userText);
  const say = (ok, text, detail = "") => check(ok, `${ID} quota: ${text}`, ok ? "" : `${detail}${detail ? "\n" : ""}--- loopback requests ---\n${api.log.slice(-6).join("\n")}`);
  try {
    const id = randomUUID();
    const feed = join(session, "status.json");
    const query = { cwd, env: runEnv, started: new Date(), sessionId: id, feed };
    const settings = hooks.launchSettings(query);
    say(settings?.statusLine?.padding === 0 && /status-relay\.js' '[^']+status\.json' 'input=/.test(settings?.statusLine?.command ?? ""), "the run's settings run uuldana's relay with the user's own command, their padding kept", JSON.stringify(settings));
    const settingsFile = join(session, "settings.json");
    writeFileSync(settingsFile, JSON.stringify(settings), { mode: 0o600 });
    const idArgs = manifest.session_id.args.map((arg) => arg.replaceAll("{id}", id));
    const run = await startHosted({ root, id: ID, bin, env, setup: { ...setup, args: [...setup.args, manifest.quota.settings_flag, settingsFile, ...idArgs] } });
    const screen = async () => (await run.screen.read()).visible.join("\n");
    try {
      // the status line takes the place of the footer's "? for shortcuts": the user's own line before any answer
      let ok = await waitOnScreen(run, (text) => /^❯/m.test(text) && text.includes("keeper's line: waiting"), 40_000);
      say(ok, "the real CLI starts with the user's own status line drawn through the relay", await shown(screen));
      ok = ok && (await ask(run, ASK[0], (text) => text.includes(ANSWER)));
      say(ok, "the real CLI answers the first question", await shown(screen));
      if (!ok) return;
      const fed = await waitFor(() => readFileSync(feed, "utf8").includes('"rate_limits"'), 15_000);
      const status = fed ? JSON.parse(readFileSync(feed, "utf8")) : undefined;
      const expected = { five_hour: { used_percentage: numbers.five, resets_at: numbers.fiveReset }, seven_day: { used_percentage: numbers.week, resets_at: numbers.weekReset } };
      say(JSON.stringify(status?.rate_limits) === JSON.stringify(expected), "the relay's feed holds the status JSON with the server's exact numbers", JSON.stringify(status?.rate_limits));
      say(status?.session_id === id, "the status JSON is this run's (its session id)", String(status?.session_id));
      const shownOwn = await waitOnScreen(run, (text) => text.includes(OWN_SHOWN), 10_000);
      say(shownOwn, `the user's own status-line command got the same input and its output is on Claude's screen ("${OWN_SHOWN}")`, await shown(screen));
      const reading = hooks.quota(query);
      const windows = [
        { name: "five_hour", usedPercent: numbers.five, resetsAt: iso(numbers.fiveReset), windowMinutes: 300 },
        { name: "seven_day", usedPercent: numbers.week, resetsAt: iso(numbers.weekReset), windowMinutes: 10_080 },
      ];
      say(JSON.stringify(reading) === JSON.stringify({ windows }), "the quota hook reads both windows, the allowance not gone", JSON.stringify(reading));

      ok = await ask(run, ASK[1], (text) => /hit your/.test(text));
      say(ok, "the real CLI meets its limit at the second question", await shown(screen));
      if (!ok) return;
      let refused;
      await waitFor(() => (refused = hooks.quota(query))?.exhausted !== undefined, 10_000);
      const gone = refused?.exhausted;
      say(gone?.kind === "session" && gone.reset_at === iso(numbers.limitReset) && /^You've hit your 5-hour limit · resets /.test(gone.text ?? ""), "the refusal in the CLI's session file is read as the allowance gone, with the server's reset", JSON.stringify(refused));
    } finally {
      await run.stop();
      await run.result;
    }
    say(readFileSync(userSettings, "utf8") === userText, "the user's own settings file is as it was");
    say(problems.length === 0, "the hooks were never turned off", JSON.stringify(problems));
  } finally {
    api.close();
  }
}

// --- internal ---

function iso(seconds) {
  return new Date(seconds * 1000).toISOString();
}

async function waitFor(test, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if (test()) return true;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

// Types a question once the screen is idle, and waits for the answer to show with the turn over.
async function ask(run, text, answered) {
  await new Promise((r) => setTimeout(r, 500));
  run.agent.write(text);
  await new Promise((r) => setTimeout(r, 400));
  run.agent.write("\r");
  return waitOnScreen(run, (screen) => answered(screen) && !/esc to interrupt/i.test(screen), 30_000);
}

async function shown(screen) {
  return (await screen()).split("\n").filter((line) => line.trim()).slice(-10).join("\n");
}

// The Messages API on loopback: every answer carries the subscription's utilization headers (a warning, not a
// stop); the second question gets the plan-limit error.
async function startApi(numbers) {
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
      if (body.includes(ASK[1])) {
        LIMIT_REPLIES[ID](res, numbers.limitReset);
        return;
      }
      res.setHeader("anthropic-ratelimit-unified-status", "allowed_warning");
      res.setHeader("anthropic-ratelimit-unified-5h-utilization", String(numbers.five / 100));
      res.setHeader("anthropic-ratelimit-unified-5h-reset", String(numbers.fiveReset));
      res.setHeader("anthropic-ratelimit-unified-5h-surpassed-threshold", "0.9");
      res.setHeader("anthropic-ratelimit-unified-7d-utilization", String(numbers.week / 100));
      res.setHeader("anthropic-ratelimit-unified-7d-reset", String(numbers.weekReset));
      res.setHeader("anthropic-ratelimit-unified-representative-claim", "five_hour");
      anthropicAnswer(res, body.includes(ASK[0]) ? ANSWER : "Noted.");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, log, close: () => server.close() };
}
