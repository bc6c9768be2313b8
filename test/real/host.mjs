// The real agents under uuldana: their screens read from uuldana's model, stopped with their real exit keys,
// and the user's terminal as it was.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { harnesses } from "./harness.mjs";

// What each agent shows once it is up and taking input (or asking to sign in or trust).
export const READY = {
  codex: /Ask Codex to do anything/,
  gemini: /Type your message/,
};

// Starts a real agent through uuldana's host at the ask level, with plain streams for the user's terminal.
export async function startHosted({ root, id, bin, env, setup, ...more }) {
  const { startRun } = await import(join(root, "dist", "core", "host.js"));
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

// Runs "uuldana run" in a real terminal (a pseudo-terminal held here), stops it with SIGTERM, and compares the
// terminal's settings before and after.
export async function checkTerminalRestored({ root, id, bins, env, check }) {
  const require = createRequire(join(root, "package.json"));
  const pty = require("node-pty");
  const setup = harnesses[id].setup();
  const config = mkdtempSync(join(tmpdir(), "uuldana-real-config-"));
  writeFileSync(join(config, "config.json"), JSON.stringify({ providers: [id], auto_detect: false }));
  const cli = join(root, "dist", "core", "cli.js");
  const script = `stty -g; "${process.execPath}" "${cli}" run -- ${setup.args.join(" ")} & pid=$!; echo "uuldana pid $pid"; wait $pid; echo "code $?"; echo "settings-after $(stty -g)"`;
  const child = pty.spawn("/bin/sh", ["-c", script], {
    name: "xterm-256color",
    cols: 200,
    rows: 50,
    cwd: setup.cwd,
    env: { ...env, ...setup.env, PATH: `${bins}:${env.PATH}`, UULDANA_CONFIG_DIR: config, UULDANA_DATA_DIR: join(config, "data"), UULDANA_CACHE_DIR: join(config, "cache") },
  });
  let out = "";
  child.onData((d) => (out += d));
  const exited = new Promise((resolve) => child.onExit(resolve));
  // SIGTERM only once the agent takes input: keys typed while it is still loading are lost, and it is signalled
  const plain = () => out.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>]/g, "");
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline && !(/uuldana pid \d+/.test(out) && READY[id].test(plain()))) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1000));
  const pid = Number(/uuldana pid (\d+)/.exec(out)?.[1]);
  if (pid) process.kill(pid, "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
  const lines = out.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>]/g, "").split(/\r?\n/);
  const before = lines.find((line) => /^[0-9a-f]+(:[0-9a-f]+){10,}/.test(line.trim()))?.trim();
  const after = lines.find((line) => line.includes("settings-after "))?.split("settings-after ")[1]?.trim();
  const stopped = lines.find((line) => line.includes("uuldana: stopped"))?.trim() ?? "";
  check(/^uuldana: stopped \S+ \(.+\) with its exit keys after \d+s$/.test(stopped), `${id} in a real terminal: SIGTERM to uuldana stops it with its exit keys`, stopped || lines.slice(-6).join("\n"));
  check(lines.some((line) => line.trim() === "code 143"), `${id} in a real terminal: uuldana exits 143 after SIGTERM`);
  check(before !== undefined && before === after, `${id} in a real terminal: the terminal settings are as before`, `${before}\n${after}`);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // gone
  }
}
