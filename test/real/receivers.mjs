// A failover whose next agents are the real Codex and Gemini CLIs, installed and never signed in (a fresh home each,
// no credentials). Gemini's files show it is not signed in, so it is skipped with the command that signs it in and
// never started. Codex is told to keep its login in a keychain, so its files cannot tell: it is started, and uuldana
// must leave it at its sign-in screen as soon as it shows, with the command that signs it in. Neither rests; the
// stand-in after them gets the same conversation. receiver_seconds is set far beyond the check's own bound, so only
// the sign-in screen can move the session on in time.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { CREDENTIALS } from "./gates.mjs";

const REQUEST = "please add a test for the lexer";
const STAND_IN = { version: { args: ["--version"] }, prompt: { mode: "argv" }, levels: { "read-only": { args: ["--read-only"] }, ask: { args: ["--ask"] } }, exit: { keys: ["/exit", "{enter}"], wait_seconds: 1, signals: ["SIGHUP", "SIGTERM"] } };

export async function checkReceivers({ root, detections, env, check }) {
  const pty = createRequire(join(root, "package.json"))("node-pty");
  for (const id of ["codex", "gemini"]) {
    if (!detections.get(id)?.path) return check(false, `receivers: ${id} is installed`);
  }
  const folder = mkdtempSync(join(tmpdir(), "receivers-"));
  const dirs = { UULDANA_CONFIG_DIR: join(folder, "config"), UULDANA_DATA_DIR: join(folder, "data"), UULDANA_CACHE_DIR: join(folder, "cache") };
  const bin = join(folder, "bin");
  const project = join(folder, "project");
  for (const path of [bin, project, join(folder, "codex-home"), join(folder, "gemini-home"), join(dirs.UULDANA_CONFIG_DIR, "providers")]) mkdirSync(path, { recursive: true });
  writeFileSync(join(folder, "codex-home", "config.toml"), 'cli_auth_credentials_store = "keyring"\n');
  for (const [name, script] of [["limit", "limit-agent.mjs"], ["line", "line-agent.mjs"]]) {
    symlinkSync(join(root, "test", "fixtures", "agents", script), join(bin, name));
    const manifest = { id: name, name: `Stand-in ${name}`, executables: [name], ...STAND_IN, version: { args: ["--version"], pattern: `^${name} (\\d+\\.\\d+\\.\\d+)` } };
    writeFileSync(join(dirs.UULDANA_CONFIG_DIR, "providers", `${name}.json`), JSON.stringify(manifest));
  }
  const entries = ["limit", { id: "codex", env: { CODEX_HOME: join(folder, "codex-home") } }, { id: "gemini", env: { GEMINI_CLI_HOME: join(folder, "gemini-home") } }, "line"];
  writeFileSync(join(dirs.UULDANA_CONFIG_DIR, "config.json"), JSON.stringify({ providers: entries, auto_detect: false, quiet_seconds: 0.5, receiver_seconds: 600 }));
  const clean = Object.fromEntries(Object.entries(env).filter(([name]) => !CREDENTIALS.includes(name)));
  const paths = [bin, ...["codex", "gemini"].map((id) => dirname(detections.get(id).path)), clean.PATH].join(":");
  const runEnv = { ...clean, ...dirs, PATH: paths, HOME: folder, LIMIT_MODE: "answer", LIMIT_RESET: "Dec 9, 9am (UTC)", TZ: "UTC" };
  const terminal = pty.spawn(process.execPath, [join(root, "dist", "core", "cli", "main.js"), "run"], { cols: 160, rows: 45, cwd: project, env: runEnv });
  let output = "";
  terminal.onData((data) => (output += data));
  const journal = () => readJournal(dirs.UULDANA_DATA_DIR);
  try {
    await until(() => output.includes("limit agent ready"), 20_000);
    terminal.write(`${REQUEST}\r`);
    const reached = await until(() => output.includes("line agent ready"), 90_000);
    check(reached, "receivers: the stand-in after the real Codex and Gemini got the conversation, long before receiver_seconds", output.slice(-2000));
    const receivers = journal().filter((event) => event.type === "receiver" && event.entry !== "line");
    check(
      JSON.stringify(receivers.map((event) => [event.entry, event.took, event.reason, event.sign_in])) === JSON.stringify([["codex", false, 'it asks to sign in: run "codex login"', true]]),
      "receivers: Codex was left at its sign-in screen, with the command that signs it in",
      JSON.stringify(receivers),
    );
    const skipped = journal().filter((event) => event.type === "skipped" && event.entry === "gemini");
    check(
      skipped.length > 0 && skipped.every((event) => JSON.stringify(event.reasons) === JSON.stringify(['not signed in: run "gemini"'])),
      "receivers: Gemini, not signed in, was skipped with the command that signs it in, never started",
      JSON.stringify(skipped),
    );
    const rests = journal().filter((event) => event.type === "cooldown").map((event) => event.entry);
    check(JSON.stringify(rests) === JSON.stringify(["limit"]), "receivers: neither Codex nor Gemini rests", JSON.stringify(rests));
    const prompt = /line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(output.replace(/\r?\n/g, ""))?.[1];
    check(prompt !== undefined && JSON.parse(prompt).at(-1).includes(`I answered: ${REQUEST}`), "receivers: the stand-in's prompt carries the conversation");
  } finally {
    terminal.kill();
  }
}

function readJournal(dataDir) {
  const sessions = join(dataDir, "sessions");
  const [id] = readdirSync(sessions);
  if (!id) return [];
  return readFileSync(join(sessions, id, "journal.jsonl"), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

async function until(condition, ms) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}
