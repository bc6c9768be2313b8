// Wall time of "uuldana providers list" with every built-in manifest and a 20-folder PATH, cold and warm,
// next to "node -e 0" (the floor any Node CLI pays to start).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, join } from "node:path";

const RUNS = 20;

function time(args, env) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  if (run.status !== 0) throw new Error(`${args.join(" ")} failed: ${run.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95) };
}

const ms = (value) => `${value.toFixed(0)} ms`;

export async function measureProvidersList(root) {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-"));
  const folders = [];
  // real agent CLIs when test:real has installed them, so the probes are real
  const real = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "uuldana-real-agents", "node_modules", ".bin");
  if (existsSync(real)) folders.push(real);
  folders.push("/usr/local/bin", "/usr/bin", "/bin");
  for (let i = folders.length; i < 20; i++) {
    const folder = join(dir, `path-${i}`);
    mkdirSync(folder);
    for (let f = 0; f < 50; f++) writeFileSync(join(folder, `tool-${f}`), "");
    folders.push(folder);
  }
  const env = {
    ...process.env,
    PATH: folders.join(delimiter),
    UULDANA_CONFIG_DIR: join(dir, "config"),
    UULDANA_DATA_DIR: join(dir, "data"),
    UULDANA_CACHE_DIR: join(dir, "cache"),
  };
  const bin = join(root, "dist", "core", "cli.js");
  const cold = [];
  for (let i = 0; i < 3; i++) {
    rmSync(join(dir, "cache"), { recursive: true, force: true });
    cold.push(time([bin, "providers", "list"], env));
  }
  const warm = [];
  for (let i = 0; i < RUNS; i++) warm.push(time([bin, "providers", "list"], env));
  const floor = [];
  for (let i = 0; i < RUNS; i++) floor.push(time(["-e", "0"], env));
  rmSync(dir, { recursive: true, force: true });
  const w = stats(warm);
  const c = stats(cold);
  const f = stats(floor);
  const probes = existsSync(real) ? "real CLIs" : "no CLIs";
  return [
    { name: `providers list, warm (${probes}, 20-folder PATH)`, median: ms(w.median), p95: ms(w.p95), baseline: `node -e 0: ${ms(f.median)}`, ratio: `${(w.median / f.median).toFixed(2)}x` },
    { name: `providers list, cold cache (${probes})`, median: ms(c.median), p95: ms(c.p95), baseline: "-", ratio: "-" },
  ];
}
