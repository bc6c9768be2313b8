// Pass-through throughput: cat of a 50 MB file straight to /dev/null, through script(1), through a detached
// tmux, through a bare node-pty relay and through uuldana; each also on an empty file, to tell starting and
// ending apart from passing output through. The commands take turns, round after round, so drift on the
// machine hits all alike.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

import { scratch } from "./scratch.mjs";
import { fmt, ratio, ratioGoal, stats } from "./stats.mjs";
import { killServer, outsideTmux } from "./tmux.mjs";

const SIZE_MB = 50;
const ROUNDS = 9;
const GOAL = "≥ 0.9× script · > tmux";

export const rows = {
  direct: { name: `cat ${SIZE_MB} MB: direct to /dev/null` },
  script: { name: `cat ${SIZE_MB} MB: through script -qfc` },
  tmux: { name: `cat ${SIZE_MB} MB: through a detached tmux` },
  relay: { name: `cat ${SIZE_MB} MB: through a bare node-pty relay` },
  uuldana: { name: `cat ${SIZE_MB} MB: through uuldana run`, goal: GOAL },
  net: { name: `cat ${SIZE_MB} MB: uuldana, less start and exit`, goal: GOAL },
  tmuxNet: { name: `cat ${SIZE_MB} MB: tmux, less start and exit` },
};

// uuldana's rate against script's and tmux's, each measured the same way in the same rounds
function goalCell(uuldana, script, tmux) {
  return `${ratioGoal("≥ 0.9× script", uuldana.median, script.median, (r) => r >= 0.9)} · ${ratioGoal("> tmux", uuldana.median, tmux.median, (r) => r > 1)}`;
}

function seconds(line, env) {
  const start = process.hrtime.bigint();
  const run = spawnSync("sh", ["-c", line], { env, stdio: "ignore", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`"${line}" failed with ${run.status ?? run.signal}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function measure({ root, script, tmux }) {
  const home = scratch("cat");
  const env = outsideTmux(home.env);
  // a server of its own for every run: the next run must not reach one that is still shutting down
  const sockets = [];
  try {
    home.provider("cat", { version: { args: ["--version"], pattern: "^cat \\(GNU coreutils\\) (\\S+)" }, exit: { signals: ["SIGTERM"], signal_wait_seconds: 1 } });
    home.config({ providers: ["cat"] });
    const file = join(home.dir, "payload.txt");
    const line = "the quick brown fox jumps over the lazy dog 0123456789 lorem ipsum dolor\n";
    const bytes = SIZE_MB * 1024 * 1024;
    writeFileSync(file, line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes));

    const node = `"${process.execPath}"`;
    const relay = `"${join(root, "bench", "relay.mjs")}"`;
    const cli = `"${join(root, "dist", "core", "cli", "main.js")}"`;
    const commands = {
      direct: (f) => `cat "${f}" > /dev/null`,
      script: script ? (f) => `script -qfc 'cat "${f}"' /dev/null > /dev/null` : undefined,
      // new-session -d returns at once, so the same client then waits on a channel that the end of the session
      // signals: once cat has exited and tmux has closed its pane (a signal, not polling for the session)
      tmux: tmux
        ? (f) => {
            const socket = join(home.dir, `tmux-${sockets.length}`);
            sockets.push(socket);
            return `tmux -S "${socket}" -f /dev/null set-hook -g session-closed 'wait-for -S done' \\; new-session -d -x 120 -y 40 'cat "${f}"' \\; wait-for done > /dev/null 2>&1`;
          }
        : undefined,
      relay: (f) => `${node} ${relay} cat "${f}" > /dev/null`,
      uuldana: (f) => `${node} ${cli} run --provider cat -- "${f}" > /dev/null 2>&1`,
    };
    const full = {};
    const net = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const [id, command] of Object.entries(commands)) {
        if (!command) continue;
        const empty = seconds(command("/dev/null"), env);
        const whole = seconds(command(file), env);
        (full[id] ??= []).push(whole);
        (net[id] ??= []).push(Math.max(0.001, whole - empty));
      }
    }

    // MB/s from the median run, and from the slowest for the p95 column
    const rate = (samples) => {
      const s = samples && stats(samples);
      return s ? { median: SIZE_MB / s.median, p95: SIZE_MB / s.p95, runs: s.runs } : { median: NaN, p95: NaN, runs: 0 };
    };
    const r = Object.fromEntries(Object.keys(commands).map((id) => [id, rate(full[id])]));
    const n = Object.fromEntries(Object.keys(commands).map((id) => [id, rate(net[id])]));
    const cells = (v, baseline, label) => ({
      median: fmt.mbps(v.median),
      p95: fmt.mbps(v.p95),
      runs: v.runs,
      baseline: baseline ? `${label}: ${fmt.mbps(baseline.median)}` : "-",
      ratio: baseline ? ratio(v.median, baseline.median) : "-",
    });
    return {
      rows: {
        direct: cells(r.direct),
        script: cells(r.script),
        tmux: cells(r.tmux, r.script, "script"),
        relay: cells(r.relay, r.script, "script"),
        uuldana: { ...cells(r.uuldana, r.relay, "relay"), goal: goalCell(r.uuldana, r.script, r.tmux) },
        net: { ...cells(n.uuldana, n.relay, "relay"), goal: goalCell(n.uuldana, n.script, n.tmux) },
        tmuxNet: cells(n.tmux, n.script, "script"),
      },
      notes: tmux
        ? ["tmux ran detached on a private server, timed from its start until its session ended; a row less start and exit takes off the run on an empty file, and judges its goal against script and tmux less theirs"]
        : [],
    };
  } finally {
    for (const socket of sockets) killServer(socket);
    home.remove();
  }
}
