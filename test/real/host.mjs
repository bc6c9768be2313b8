// The real agents under uuldana: their screens read from uuldana's model, stopped with their real exit keys,
// and the user's terminal as it was.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { harnesses } from "./harness.mjs";
import { uuldanaPid } from "./session.mjs";
import { startTerminal } from "./terminal.mjs";

// What each agent shows once it is up and taking input (or asking to sign in or trust).
export const READY = {
  codex: /Ask Codex to do anything/,
  gemini: /Type your message/,
};

// Starts a real agent through uuldana's host at the ask level, with plain streams for the user's terminal.
// A built-in provider as a session opens it, from the compiled code: its manifest, its guarded hooks, and the
// problems reported if a hook was turned off.
export async function openBuiltIn(root, id) {
  const { loadManifestFile } = await import(join(root, "dist", "core", "registry", "manifest.js"));
  const { openProvider } = await import(join(root, "dist", "core", "registry", "provider.js"));
  const record = await loadManifestFile(join(root, "manifests", `${id}.json`), "built-in");
  const problems = [];
  const hooks = await openProvider(record, { report: (problem) => problems.push(problem) });
  return { record, manifest: record.manifest, hooks, problems };
}

// Waits until a test of the run's visible screen holds, looking every 200 ms; false after ms.
export async function waitOnScreen(run, test, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (test((await run.screen.read()).visible.join("\n"))) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

export async function startHosted({ root, id, bin, env, setup, ...more }) {
  const { startRun } = await import(join(root, "dist", "core", "host", "host.js"));
  const manifest = JSON.parse(readFileSync(join(root, "manifests", `${id}.json`), "utf8"));
  const level = manifest.levels.ask;
  return startRun({
    file: bin,
    args: [...(manifest.args ?? []), ...(level.args ?? []), ...setup.args],
    env: { ...env, TERM: "xterm-256color", ...setup.env, ...(level.env ?? {}) },
    cwd: setup.cwd,
    entry: id,
    level: "ask",
    exit: manifest.exit,
    commandKey: "ctrl-]",
    stdin: new PassThrough(),
    stdout: new Writable({ write: (_chunk, _encoding, done) => done() }),
    ...more,
  });
}

export async function checkHosted({ root, id, bin, env, check }) {
  const run = await startHosted({ root, id, bin, env, setup: harnesses[id].setup() });
  const deadline = Date.now() + 30_000;
  let shown = "";
  while (Date.now() < deadline) {
    shown = (await run.screen.read()).visible.join("\n");
    if (READY[id].test(shown)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  check(READY[id].test(shown), `${id} under uuldana: the screen model shows ${READY[id]}`, shown.split("\n").filter((l) => l.trim()).slice(-8).join("\n"));
  const stop = await run.stop();
  const result = await run.result;
  check(stop.step === "keys", `${id} under uuldana: its exit keys stop it (stopped by ${stop.step}, exit ${result.exitCode})`);
  // processes killed a moment ago may take a little while to go; zombies no one reaps do not count
  const living = () =>
    spawnSync("ps", ["-o", "pid=,stat=", "-g", String(run.agent.pid)], { encoding: "utf8" })
      .stdout.split("\n")
      .filter((line) => line.trim() && !/\bZ/.test(line.trim().split(/\s+/)[1] ?? ""))
      .join("\n");
  const until = Date.now() + 3000;
  while (living() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  check(living() === "", `${id} under uuldana: no process of its group is left`, living());
}

// Runs "uuldana run" in a real terminal (a pseudo-terminal held here), stops it with SIGTERM once the agent takes
// input (keys typed while it is still loading are lost, and it would be signalled), and compares the terminal's
// settings before and after.
export async function checkTerminalRestored({ root, id, bins, env, check }) {
  const setup = harnesses[id].setup();
  const config = mkdtempSync(join(tmpdir(), "uuldana-real-config-"));
  writeFileSync(join(config, "config.json"), JSON.stringify({ providers: [{ id, args: setup.args }], auto_detect: false }));
  const data = join(config, "data");
  const terminal = startTerminal({
    root,
    cwd: setup.cwd,
    cols: 200,
    rows: 50,
    env: { ...env, ...setup.env, PATH: `${bins}:${env.PATH}`, UULDANA_CONFIG_DIR: config, UULDANA_DATA_DIR: data, UULDANA_CACHE_DIR: join(config, "cache") },
  });
  try {
    await terminal.waitFor(() => uuldanaPid(data) !== undefined && READY[id].test(terminal.text()), 40_000);
    await new Promise((r) => setTimeout(r, 1000));
    const pid = uuldanaPid(data);
    if (pid) process.kill(pid, "SIGTERM");
    await terminal.waitFor(() => /^code \d+/m.test(terminal.plainOutput()), 30_000);
    const lines = terminal.plainOutput().split("\n");
    const { before, after } = await terminal.settings();
    const stopped = lines.find((line) => line.includes("uuldana: stopped"))?.trim() ?? "";
    check(/^uuldana: stopped \S+ \(.+\) with its exit keys after \d+s$/.test(stopped), `${id} in a real terminal: SIGTERM to uuldana stops it with its exit keys`, stopped || lines.slice(-6).join("\n"));
    check(lines.some((line) => line.trim() === "code 143"), `${id} in a real terminal: uuldana exits 143 after SIGTERM`);
    check(before !== undefined && before === after, `${id} in a real terminal: the terminal settings are as before`, `${before}\n${after}`);
  } finally {
    await terminal.close();
  }
}
