// Tail completeness: an agent whose last write is large (512 KB) and whose exit follows at once, run in a
// pseudo-terminal held here as the user's terminal would be, through script(1), a bare node-pty relay and uuldana,
// in turns; a run counts as whole when every byte of that write reached the terminal.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";

import { scratch } from "./scratch.mjs";

const TAIL_KB = 512;
const RUNS = 10;

export const rows = {
  script: { name: `last byte: ${TAIL_KB} KB final write, then exit: through script -qfc` },
  relay: { name: `last byte: ${TAIL_KB} KB final write, then exit: through a bare node-pty relay` },
  uuldana: { name: `last byte: ${TAIL_KB} KB final write, then exit: through uuldana run`, goal: "every byte, every run" },
};

// The agent's bytes that reached the terminal (its lines, whatever line ends the terminals made of them).
function agentBytes(output) {
  return output
    .toString("latin1")
    // the title and mode sequences the hosts write around the agent's output
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\r/g, "")
    .split("\n")
    .filter((line) => /^tail (\d{6} [0-9A-Za-z]{52}|end \d+)$/.test(line))
    .reduce((sum, line) => sum + line.length + 1, 0);
}

function runOnce(pty, [file, args], env) {
  return new Promise((resolve) => {
    const child = pty.spawn(file, args, { name: "xterm-256color", cols: 100, rows: 30, env, encoding: null });
    const chunks = [];
    child.onData((data) => chunks.push(Buffer.from(data)));
    child.onExit(() => resolve(agentBytes(Buffer.concat(chunks))));
  });
}

export async function measure({ root, script }) {
  const pty = createRequire(join(root, "package.json"))("node-pty");
  const home = scratch("tail");
  try {
    // the tail test's own stand-in: numbered lines and a closing line in one write, then its exit at once
    const source = join(root, "test", "fixtures", "agents", "big-tail.mjs");
    home.link("tailer", source);
    home.env.TAIL_KB = String(TAIL_KB);
    const agent = join(home.dir, "bin", "tailer");
    home.provider("tailer", { exit: { signals: ["SIGTERM"], signal_wait_seconds: 1 } });
    home.config({ providers: ["tailer"] });
    const hosts = {
      script: script ? ["script", ["-qfc", agent, "/dev/null"]] : undefined,
      relay: [process.execPath, [join(root, "bench", "relay.mjs"), agent]],
      uuldana: [process.execPath, [join(root, "dist", "core", "cli", "main.js"), "run", "--provider", "tailer"]],
    };
    // what the agent writes, as it writes it to a pipe
    const whole = agentBytes(spawnSync(process.execPath, [source], { env: home.env }).stdout);
    const lost = Object.fromEntries(Object.keys(hosts).map((id) => [id, []]));
    for (let i = 0; i < RUNS; i++) for (const [id, host] of Object.entries(hosts)) if (host) lost[id].push(whole - (await runOnce(pty, host, home.env)));
    const cells = (id) => {
      const runs = lost[id];
      if (!runs.length) return { median: "n/a", p95: "-", runs: 0, baseline: "-", ratio: "-" };
      const complete = runs.filter((bytes) => bytes === 0).length;
      return { median: `${complete} of ${runs.length} whole`, p95: `lost ≤ ${(Math.max(...runs) / 1024).toFixed(1)} KB`, runs: runs.length, baseline: "-", ratio: "-" };
    };
    const uuldana = cells("uuldana");
    const met = lost.uuldana.length > 0 && lost.uuldana.every((bytes) => bytes === 0);
    return {
      rows: { script: cells("script"), relay: cells("relay"), uuldana: { ...uuldana, goal: `every byte, every run ${met ? "✓" : "✗"}` } },
      notes: [`a whole run delivers all ${(whole / 1024).toFixed(0)} KB of the agent's last write`],
    };
  } finally {
    home.remove();
  }
}
