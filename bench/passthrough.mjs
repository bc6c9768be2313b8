// Pass-through: throughput of cat of a 50 MB file directly, through script(1) and through uuldana; keystroke
// echo latency through each; and uuldana's memory with 10,000 lines of scrollback.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const MB = 1024 * 1024;

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95) };
}

// A scratch uuldana setup with two stand-in providers: "cat" (the real cat) and "echoer" (echoes each key).
function setup(root) {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-pt-"));
  const config = join(dir, "config");
  const bin = join(dir, "bin");
  mkdirSync(join(config, "providers"), { recursive: true });
  mkdirSync(bin);
  const echoer = join(bin, "echoer");
  writeFileSync(echoer, '#!/bin/sh\n[ "$1" = "--version" ] && { echo "echoer 1.0.0"; exit 0; }\nstty raw -echo\nexec cat\n');
  chmodSync(echoer, 0o755);
  const scroller = join(bin, "scroller");
  writeFileSync(scroller, '#!/bin/sh\n[ "$1" = "--version" ] && { echo "scroller 1.0.0"; exit 0; }\nseq 1 10000 | sed "s/^/scrollback line /"\necho done-scrolling\nexec sleep 30\n');
  chmodSync(scroller, 0o755);
  const manifest = (id, executable, pattern) => ({
    id,
    name: id,
    executables: [executable],
    version: { args: ["--version"], pattern },
    levels: { ask: {} },
    exit: { signals: ["SIGTERM"], signal_wait_seconds: 1 },
  });
  writeFileSync(join(config, "providers", "cat.json"), JSON.stringify(manifest("cat", "cat", "^cat \\(GNU coreutils\\) (\\S+)")));
  writeFileSync(join(config, "providers", "echoer.json"), JSON.stringify(manifest("echoer", "echoer", "^echoer (\\S+)")));
  writeFileSync(join(config, "providers", "scroller.json"), JSON.stringify(manifest("scroller", "scroller", "^scroller (\\S+)")));
  writeFileSync(join(config, "config.json"), JSON.stringify({ auto_detect: false, providers: ["cat", "echoer", "scroller"], scrollback: 10000 }));
  const env = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    UULDANA_CONFIG_DIR: config,
    UULDANA_DATA_DIR: join(dir, "data"),
    UULDANA_CACHE_DIR: join(dir, "cache"),
  };
  return { dir, env, cli: join(root, "dist", "core", "cli.js") };
}

// Wall time of a command, median of several runs, run in turns with the others so drift hits all alike.
function timeRuns(commands, runs) {
  const seconds = commands.map(() => []);
  for (let i = 0; i < runs; i++) {
    commands.forEach(({ label, args, env }, c) => {
      const start = process.hrtime.bigint();
      const run = spawnSync("sh", ["-c", args], { env, stdio: ["ignore", "ignore", "ignore"] });
      if (run.status !== 0) throw new Error(`${label} failed with ${run.status}`);
      seconds[c].push(Number(process.hrtime.bigint() - start) / 1e9);
    });
  }
  return seconds.map((samples) => stats(samples).median);
}

// An echo agent in a pseudo-terminal held here, as the user's terminal: one byte written, time until its echo
// comes back. The hosts are measured in turns, one key each, so that noise on the machine hits all alike.
async function echoLatencies(pty, hosts, env, trials = 300) {
  const sessions = hosts.map(({ file, args }) => {
    const child = pty.spawn(file, args, { name: "xterm-256color", cols: 100, rows: 30, env });
    const session = { child, seen: "", waiting: undefined, samples: [] };
    child.onData((data) => {
      session.seen += data;
      if (session.waiting && data.includes(session.waiting.char)) {
        const done = session.waiting;
        session.waiting = undefined;
        done.resolve(process.hrtime.bigint());
      }
    });
    return session;
  });
  for (const session of sessions) {
    const deadline = Date.now() + 20_000;
    while (!session.seen.includes("READY") && Date.now() < deadline) {
      session.child.write("READY");
      await new Promise((r) => setTimeout(r, 200));
    }
    if (!session.seen.includes("READY")) throw new Error("an echo agent never answered");
  }
  await new Promise((r) => setTimeout(r, 300));
  for (let i = 0; i < trials; i++) {
    for (const session of sessions) {
      const char = String.fromCharCode(97 + (i % 26));
      const arrived = new Promise((resolve) => (session.waiting = { char, resolve }));
      const start = process.hrtime.bigint();
      session.child.write(char);
      const end = await Promise.race([arrived, new Promise((r) => setTimeout(() => r(undefined), 1000))]);
      if (end !== undefined) session.samples.push(Number(end - start) / 1000);
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  for (const { child } of sessions) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  return sessions.map((session) => stats(session.samples));
}

async function rssWithScrollback(cli, env) {
  const child = spawn(process.execPath, [cli, "run", "--provider", "scroller"], { env, stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const deadline = Date.now() + 30_000;
  while (!out.includes("done-scrolling") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1500));
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  return kb / 1024;
}

export async function measurePassThrough(root) {
  const { dir, env, cli } = setup(root);
  const require = createRequire(join(root, "package.json"));
  const pty = require("node-pty");
  const relay = join(root, "bench", "relay.mjs");
  const file = join(dir, "50mb.txt");
  const line = "the quick brown fox jumps over the lazy dog 0123456789 lorem ipsum dolor\n";
  writeFileSync(file, line.repeat(Math.ceil((50 * MB) / line.length)).slice(0, 50 * MB));
  const node = process.execPath;
  const commands = (target) => [
    { label: "direct", args: `cat "${target}" > /dev/null`, env },
    { label: "script", args: `script -qfc 'cat "${target}"' /dev/null > /dev/null`, env },
    { label: "relay", args: `"${node}" "${relay}" cat "${target}" > /dev/null`, env },
    { label: "uuldana", args: `"${node}" "${cli}" run --provider cat -- "${target}" > /dev/null 2>&1`, env },
  ];
  // the same commands on an empty file: what starting and ending costs, apart from passing output through
  const empty = timeRuns(commands("/dev/null"), 3);
  const full = timeRuns(commands(file), 3);
  const rate = (i) => 50 / full[i];
  const net = (i) => 50 / Math.max(0.001, full[i] - empty[i]);

  const echoAgent = join(dir, "bin", "echoer");
  const [echoDirect, echoScript, echoRelay, echoUuldana] = await echoLatencies(
    pty,
    [
      { file: echoAgent, args: [] },
      { file: "script", args: ["-qfc", echoAgent, "/dev/null"] },
      { file: node, args: [relay, echoAgent] },
      { file: node, args: [cli, "run", "--provider", "echoer"] },
    ],
    env,
  );
  const rss = await rssWithScrollback(cli, env);
  rmSync(dir, { recursive: true, force: true });

  const mbps = (v) => `${v.toFixed(0)} MB/s`;
  const us = (v) => `${v.toFixed(0)} µs`;
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
  return [
    { name: "cat 50 MB: direct (to /dev/null)", median: mbps(rate(0)), p95: "-", baseline: "-", ratio: "-" },
    { name: "cat 50 MB: through script -qfc", median: mbps(rate(1)), p95: "-", baseline: "-", ratio: "-" },
    { name: "cat 50 MB: through a bare node-pty relay", median: mbps(rate(2)), p95: "-", baseline: `script: ${mbps(rate(1))}`, ratio: ratio(rate(2), rate(1)) },
    { name: "cat 50 MB: through uuldana run", median: mbps(rate(3)), p95: "-", baseline: `script: ${mbps(rate(1))}`, ratio: ratio(rate(3), rate(1)) },
    { name: "cat 50 MB: uuldana, less start and exit", median: mbps(net(3)), p95: "-", baseline: `script: ${mbps(net(1))}`, ratio: ratio(net(3), net(1)) },
    { name: "key echo: agent directly", median: us(echoDirect.median), p95: us(echoDirect.p95), baseline: "-", ratio: "-" },
    { name: "key echo: through script -qfc", median: us(echoScript.median), p95: us(echoScript.p95), baseline: "-", ratio: "-" },
    { name: "key echo: through a bare node-pty relay", median: us(echoRelay.median), p95: us(echoRelay.p95), baseline: `script: ${us(echoScript.median)}`, ratio: ratio(echoRelay.median, echoScript.median) },
    { name: "key echo: through uuldana run", median: us(echoUuldana.median), p95: us(echoUuldana.p95), baseline: `script: ${us(echoScript.median)}`, ratio: ratio(echoUuldana.median, echoScript.median) },
    { name: "uuldana RSS, 10,000 lines of scrollback", median: `${rss.toFixed(0)} MB`, p95: "-", baseline: "goal < 100 MB", ratio: "-" },
  ];
}
