// Memory: uuldana's resident size once an agent has printed 10,000 lines into its scrollback, next to a bare
// node-pty relay given the same agent (what Node and node-pty cost before uuldana keeps anything).
import { spawn } from "node:child_process";
import { join } from "node:path";

import { rssMB } from "./proc.mjs";
import { scratch } from "./scratch.mjs";
import { fmt, goal, ratio, sleep, stats } from "./stats.mjs";

export const rows = {
  rss: { name: "uuldana RSS, 10,000 lines of scrollback", goal: "≤ 100 MB" },
};

// Resident size in a few looks over a second, once the output is in and has settled.
async function settledRss(args, env) {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let tail = "";
  child.stdout.on("data", (d) => (tail = (tail + d).slice(-200)));
  try {
    const deadline = Date.now() + 30_000;
    while (!tail.includes("done-scrolling") && child.exitCode === null && Date.now() < deadline) await sleep(100);
    if (!tail.includes("done-scrolling")) return undefined;
    await sleep(1000);
    const looks = [];
    for (let i = 0; i < 5; i++) {
      looks.push(rssMB(child.pid));
      await sleep(250);
    }
    return stats(looks);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

export async function measure({ root }) {
  const home = scratch("memory");
  try {
    const agent = home.tool("scroller", '#!/bin/sh\n[ "$1" = "--version" ] && { echo "scroller 1.0.0"; exit 0; }\nseq 1 10000 | sed "s/^/scrollback line /"\necho done-scrolling\nexec sleep 30\n');
    home.provider("scroller", { exit: { signals: ["SIGTERM"], signal_wait_seconds: 1 } });
    home.config({ providers: ["scroller"], scrollback: 10000 });
    // memory, not time: the two can share the machine without changing what is measured
    const [uuldana, relay] = await Promise.all([
      settledRss([join(root, "dist", "core", "cli", "main.js"), "run", "--provider", "scroller"], home.env),
      settledRss([join(root, "bench", "relay.mjs"), agent], home.env),
    ]);
    return {
      rows: {
        rss: {
          median: fmt.mb(uuldana?.median),
          p95: "-",
          runs: uuldana ? 1 : 0,
          baseline: `relay: ${fmt.mb(relay?.median)}`,
          ratio: ratio(uuldana?.median, relay?.median),
          goal: goal("≤ 100 MB", uuldana?.median, (mb) => mb <= 100),
        },
      },
    };
  } finally {
    home.remove();
  }
}
