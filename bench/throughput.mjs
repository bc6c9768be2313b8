// Pass-through throughput: cat of a 50 MB file straight to /dev/null, through script(1), through a bare
// node-pty relay and through uuldana; each also on an empty file, to tell starting and ending apart from
// passing output through. The commands take turns, round after round, so drift on the machine hits all alike.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

import { scratch } from "./scratch.mjs";
import { fmt, ratio, stats } from "./stats.mjs";

const SIZE_MB = 50;
const ROUNDS = 9;

export const rows = {
  direct: { name: `cat ${SIZE_MB} MB: direct to /dev/null` },
  script: { name: `cat ${SIZE_MB} MB: through script -qfc` },
  relay: { name: `cat ${SIZE_MB} MB: through a bare node-pty relay` },
  uuldana: { name: `cat ${SIZE_MB} MB: through uuldana run` },
  net: { name: `cat ${SIZE_MB} MB: uuldana, less start and exit` },
};

function seconds(line, env) {
  const start = process.hrtime.bigint();
  const run = spawnSync("sh", ["-c", line], { env, stdio: "ignore", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`"${line}" failed with ${run.status ?? run.signal}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function measure({ root, script }) {
  const home = scratch("cat");
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
      relay: (f) => `${node} ${relay} cat "${f}" > /dev/null`,
      uuldana: (f) => `${node} ${cli} run --provider cat -- "${f}" > /dev/null 2>&1`,
    };
    const full = {};
    const net = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const [id, command] of Object.entries(commands)) {
        if (!command) continue;
        const empty = seconds(command("/dev/null"), home.env);
        const whole = seconds(command(file), home.env);
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
    const n = { relay: rate(net.relay), uuldana: rate(net.uuldana) };
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
        relay: cells(r.relay, r.script, "script"),
        uuldana: cells(r.uuldana, r.relay, "relay"),
        net: cells(n.uuldana, n.relay, "relay"),
      },
    };
  } finally {
    home.remove();
  }
}
