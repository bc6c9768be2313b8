// Failover latency: from the last byte of the limit line to the next agent's first output, less quiet_seconds,
// with stand-ins that leave promptly on their exit keys.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const QUIET = 0.5;

export async function measureFailover(root) {
  const require = createRequire(join(root, "package.json"));
  const pty = require("node-pty");
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-failover-"));
  mkdirSync(join(dir, "config", "providers"), { recursive: true });
  mkdirSync(join(dir, "bin"));
  const agents = join(root, "test", "fixtures", "agents");
  symlinkSync(join(agents, "limit-agent.mjs"), join(dir, "bin", "first"));
  symlinkSync(join(agents, "line-agent.mjs"), join(dir, "bin", "second"));
  for (const id of ["first", "second"]) {
    writeFileSync(
      join(dir, "config", "providers", `${id}.json`),
      JSON.stringify({ id, name: id, executables: [id], version: { args: ["--version"], pattern: `^${id} (\\S+)` }, prompt: { mode: "argv" }, levels: { ask: {} }, exit: { keys: ["{escape}", "/exit", "{enter}"], wait_seconds: 2 } }),
    );
  }
  const env = { ...process.env, PATH: `${join(dir, "bin")}:${process.env.PATH}`, UULDANA_CONFIG_DIR: join(dir, "config"), UULDANA_DATA_DIR: join(dir, "data"), UULDANA_CACHE_DIR: join(dir, "cache"), LIMIT_MODE: "answer" };
  const samples = [];
  for (let trial = 0; trial < 5; trial++) {
    rmSync(join(dir, "data"), { recursive: true, force: true });
    writeFileSync(join(dir, "config", "config.json"), JSON.stringify({ providers: ["first", "second"], auto_detect: false, quiet_seconds: QUIET }));
    const child = pty.spawn(process.execPath, [join(root, "dist", "core", "cli.js"), "run"], { name: "xterm-256color", cols: 160, rows: 40, env, cwd: dir });
    let out = "";
    let limitAt;
    let nextAt;
    child.onData((data) => {
      out += data;
      const now = process.hrtime.bigint();
      if (limitAt === undefined && /hit your weekly limit[^\n]*\n/.test(out)) limitAt = now;
      if (nextAt === undefined && out.includes("line agent ready")) nextAt = now;
    });
    const deadline = Date.now() + 20_000;
    while (!out.includes("limit agent ready") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.write("go\r");
    while (nextAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
    if (limitAt !== undefined && nextAt !== undefined) samples.push(Number(nextAt - limitAt) / 1e6 - QUIET * 1000);
  }
  rmSync(dir, { recursive: true, force: true });
  samples.sort((a, b) => a - b);
  const median = samples[samples.length >> 1];
  return [{ name: "failover: limit line to next agent, less quiet", median: median === undefined ? "failed" : `${median.toFixed(0)} ms`, p95: samples.length ? `${samples.at(-1).toFixed(0)} ms` : "-", baseline: "goal < 500 ms", ratio: "-" }];
}
