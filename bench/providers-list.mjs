// Wall time of "uuldana providers list" with every built-in manifest and a 20-folder PATH, with a cold cache
// (every version probed) and a warm one, next to "node -e 0" (the floor any Node CLI pays to start). The three
// take turns, round after round, so drift on the machine hits all alike.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";

import { fmt, ratio, stats } from "./stats.mjs";

const ROUNDS = 7;
const WARM_PER_ROUND = 4;

export const rows = {
  warm: { name: "providers list, warm cache (20-folder PATH)" },
  cold: { name: "providers list, cold cache (20-folder PATH)" },
};

function ms(args, env) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"], timeout: 120_000 });
  if (run.status !== 0) throw new Error(`${args.join(" ")} failed: ${run.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// the agent CLIs test:real installs, when present, so the version probes are real ones
export function realAgents() {
  const folder = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "uuldana-real-agents", "node_modules", ".bin");
  return existsSync(folder) ? folder : undefined;
}

export async function measure({ root }) {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-list-"));
  try {
    const real = realAgents();
    // node's own folder too, so scripts that start "#!/usr/bin/env node" run wherever node is installed
    const folders = [...new Set([real, dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].filter(Boolean))];
    for (let i = folders.length; i < 20; i++) {
      const folder = join(dir, `path-${i}`);
      mkdirSync(folder);
      for (let f = 0; f < 50; f++) writeFileSync(join(folder, `tool-${f}`), "");
      folders.push(folder);
    }
    const env = { ...process.env, PATH: folders.join(delimiter), UULDANA_CONFIG_DIR: join(dir, "config"), UULDANA_DATA_DIR: join(dir, "data"), UULDANA_CACHE_DIR: join(dir, "cache") };
    const list = [join(root, "dist", "core", "cli", "main.js"), "providers", "list"];
    const cold = [];
    const warm = [];
    const floor = [];
    for (let round = 0; round < ROUNDS; round++) {
      rmSync(join(dir, "cache"), { recursive: true, force: true });
      cold.push(ms(list, env));
      for (let i = 0; i < WARM_PER_ROUND; i++) {
        warm.push(ms(list, env));
        floor.push(ms(["-e", "0"], env));
      }
    }
    const f = stats(floor);
    const cells = (s) => ({ median: fmt.ms(s.median), p95: fmt.ms(s.p95), runs: s.runs, baseline: `node -e 0: ${fmt.ms(f.median)}`, ratio: ratio(s.median, f.median) });
    return {
      rows: { warm: cells(stats(warm)), cold: cells(stats(cold)) },
      notes: [real ? "providers list probed the real agent CLIs installed by test:real" : "providers list found no agent CLIs to probe (test:real installs real ones)"],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
