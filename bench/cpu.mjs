// CPU: the time uuldana spends (user + system, all threads) while an agent streams 2 MB/s, as a share of one
// core, next to a bare node-pty relay and a detached tmux server given the same stream; then uuldana's share once
// the agent falls quiet.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";

import { NEAR, WORK } from "./agent-lines.mjs";
import { cpuSeconds } from "./proc.mjs";
import { scratch } from "./scratch.mjs";
import { fmt, goal, ratio, ratioGoal, sleep } from "./stats.mjs";
import { killServer, outsideTmux } from "./tmux.mjs";

const MB = 1024 * 1024;
const RATE_MB = 2;
const STREAM_MS = 4000;

export const rows = {
  tmux: { name: `tmux CPU (detached server), agent streaming ${RATE_MB} MB/s` },
  streaming: { name: `uuldana CPU, agent streaming ${RATE_MB} MB/s`, goal: "≤ 2× relay" },
  idle: { name: "uuldana CPU, agent idle", goal: "~0 %" },
};

// a share of one core this small counts as the idle goal's ~0 %
const IDLE_BELOW = 1;

// Writes what it owes at the rate by the clock every 10 ms, for STREAM_MS, then stays quiet until stopped.
const STREAMER = `#!/usr/bin/env node
if (process.argv.includes("--version")) { console.log("streamer 1.0.0"); process.exit(0); }
const lines = ${JSON.stringify([...WORK, ...NEAR].map((line) => `${line}\r\n`))};
const sizes = lines.map((line) => Buffer.byteLength(line));
const rate = ${RATE_MB * MB};
const start = Date.now();
let sent = 0;
let i = 0;
const stream = setInterval(() => {
  const owed = ((Date.now() - start) / 1000) * rate - sent;
  let out = "";
  for (let bytes = 0; bytes < owed; i = (i + 1) % lines.length) { out += lines[i]; bytes += sizes[i]; sent += sizes[i]; }
  if (out) process.stdout.write(out);
}, 10);
setTimeout(() => clearInterval(stream), ${STREAM_MS});
setInterval(() => {}, 60_000);
`;

// A host running the streamer: its CPU seconds and the bytes it has passed on so far, whenever asked.
function host(args, env) {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let bytes = 0;
  child.stdout.on("data", (d) => (bytes += d.length));
  return {
    look: () => ({ at: process.hrtime.bigint(), cpu: cpuSeconds(child.pid), bytes }),
    async flowing() {
      const deadline = Date.now() + 20_000;
      while (bytes === 0 && Date.now() < deadline) await sleep(50);
    },
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

const share = (a, b) => ((b.cpu - a.cpu) / (Number(b.at - a.at) / 1e9)) * 100;
const rate = (a, b) => (b.bytes - a.bytes) / MB / (Number(b.at - a.at) / 1e9);

// A private tmux server running the streamer in a detached session: its CPU seconds, whenever asked.
function tmuxHost(socket, agent, env) {
  const tmux = (...args) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env: outsideTmux(env), encoding: "utf8", timeout: 5000 });
  tmux("new-session", "-d", "-x", "100", "-y", "30", agent);
  const pid = Number(tmux("display-message", "-p", "#{pid}").stdout.trim());
  return {
    look: () => ({ at: process.hrtime.bigint(), cpu: cpuSeconds(pid), bytes: 0 }),
    stop: () => killServer(socket),
  };
}

export async function measure({ root, tmux }) {
  const home = scratch("cpu");
  try {
    const agent = home.tool("streamer", STREAMER);
    home.provider("streamer", { exit: { signals: ["SIGTERM"] } });
    home.config({ providers: ["streamer"] });

    // one after the other: two streams at once would share the two cores with each other
    const relay = host([join(root, "bench", "relay.mjs"), agent], home.env);
    await sleep(1000);
    const r0 = relay.look();
    await sleep(2500);
    const r1 = relay.look();
    await relay.stop();

    let tmuxStreaming;
    if (tmux) {
      const server = tmuxHost(join(home.dir, "tmux"), agent, home.env);
      await sleep(1000);
      const t0 = server.look();
      await sleep(2500);
      tmuxStreaming = share(t0, server.look());
      server.stop();
    }

    const uuldana = host([join(root, "dist", "core", "cli", "main.js"), "run", "--provider", "streamer"], home.env);
    // uuldana's start (its config, the agent's version) takes longer on a busy machine: the stream is measured once it flows
    await uuldana.flowing();
    await sleep(1000);
    const u0 = uuldana.look();
    await sleep(2500);
    const u1 = uuldana.look();
    await sleep(2500);
    const u2 = uuldana.look();
    await sleep(5000);
    const u3 = uuldana.look();
    await uuldana.stop();

    const streaming = share(u0, u1);
    const relayStreaming = share(r0, r1);
    const idle = share(u2, u3);
    return {
      rows: {
        tmux: { median: fmt.pct(tmuxStreaming), p95: "-", runs: tmuxStreaming === undefined ? 0 : 1, baseline: `relay: ${fmt.pct(relayStreaming)}`, ratio: ratio(tmuxStreaming, relayStreaming) },
        streaming: {
          median: fmt.pct(streaming),
          p95: "-",
          runs: 1,
          baseline: `relay: ${fmt.pct(relayStreaming)}`,
          ratio: ratio(streaming, relayStreaming),
          goal: ratioGoal("≤ 2× relay", streaming, relayStreaming, (r) => r <= 2),
        },
        idle: { median: fmt.pct2(idle), p95: "-", runs: 1, baseline: "-", ratio: "-", goal: goal("~0 %", idle, (v) => v < IDLE_BELOW) },
      },
      notes: [
        `the ${RATE_MB} MB/s stream came through at ${rate(u0, u1).toFixed(2)} MB/s in uuldana, ${rate(r0, r1).toFixed(2)} MB/s in the relay`,
        `uuldana's CPU while streaming is ${ratio(streaming, tmuxStreaming)} a detached tmux server's (which draws to no client)`,
      ],
    };
  } finally {
    home.remove();
  }
}
