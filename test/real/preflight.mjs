// uuldana preflight with the real Codex CLI installed: the entry is ready, and each check says why — its path, the
// version its package gives, signed in (its config.toml names a provider of its own), every flag a start at its level passes listed by the real "codex --help", the level
// within the ceiling, its prompt, a native reading recorded for it with its least share left and its age, no rest.
// Run twice: the second answer comes from the cache and is the same.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

import { harnesses } from "./harness.mjs";

const CHECKS = ["installed", "version", "signed-in", "flags", "level", "prompt", "quota", "resting"];

export async function checkPreflight({ root, bins, detections, env, check }) {
  const found = detections.get("codex");
  if (!found?.path) {
    check(false, "preflight: codex installed");
    return;
  }
  const folder = mkdtempSync(join(tmpdir(), "uuldana-real-preflight-"));
  const dirs = { UULDANA_CONFIG_DIR: join(folder, "config"), UULDANA_DATA_DIR: join(folder, "data"), UULDANA_CACHE_DIR: join(folder, "cache") };
  const setup = harnesses.codex.setup();
  writeConfig(dirs.UULDANA_CONFIG_DIR, setup);
  const { recordQuota } = await import(join(root, "dist", "core", "session", "quota-store.js"));
  recordQuota(dirs.UULDANA_DATA_DIR, {
    entry: "codex",
    at: new Date(Date.now() - 4 * 60_000),
    source: "rollout",
    windows: [
      { name: "primary", usedPercent: 12, windowMinutes: 300, resetsAt: new Date(Date.now() + 3_600_000) },
      { name: "secondary", usedPercent: 5, windowMinutes: 10080 },
    ],
  });
  // the CLI's own --help runs with the throwaway home, never the user's
  const runEnv = { ...env, ...dirs, HOME: setup.env.HOME, CODEX_HOME: setup.env.CODEX_HOME, PATH: `${bins}${delimiter}${env.PATH}` };
  const args = ["preflight", "codex", "--json"];
  const preflight = () => {
    const started = Date.now();
    const run = spawnSync(process.execPath, [join(root, "dist", "core", "cli", "main.js"), ...args], { cwd: setup.cwd, env: runEnv, encoding: "utf8", timeout: 60_000 });
    return { ...run, ms: Date.now() - started };
  };
  const first = preflight();
  const say = (ok, text, detail = "") => check(ok, `preflight: ${text}`, ok ? "" : `${detail}${detail ? "\n" : ""}exit ${first.status}\n${first.stdout}${first.stderr}`);
  say(first.status === 0 && first.stderr === "", "uuldana preflight codex --json exits 0 with the real Codex installed");
  let entries;
  try {
    entries = JSON.parse(first.stdout);
  } catch {
    say(false, "its output is one JSON document");
    return;
  }
  const entry = entries[0];
  say(entries.length === 1 && entry.entry === "codex" && entry.provider === "codex" && entry.ready === true, "one entry, codex, ready");
  const checks = Object.fromEntries((entry.checks ?? []).map((one) => [one.name, one]));
  say(JSON.stringify((entry.checks ?? []).map((one) => one.name)) === JSON.stringify(CHECKS), `its checks are ${CHECKS.join(", ")}`);
  for (const name of CHECKS) say(checks[name]?.ok === true, `the ${name} check passes`, JSON.stringify(checks[name]));
  say(checks.installed?.detail === found.path, "installed names the executable on PATH", `${checks.installed?.detail} vs ${found.path}`);
  say(checks.version?.detail === `${found.version}, from the package.json of @openai/codex`, `version names ${found.version}, the version "codex --version" prints`, checks.version?.detail);
  const manifest = JSON.parse(readFileSync(join(root, "manifests", "codex.json"), "utf8"));
  const level = "ask";
  const flags = [...(manifest.args ?? []), ...(manifest.levels[level].args ?? []), manifest.models?.flag, manifest.quota?.settings_flag, ...(manifest.session_id?.args ?? [])].filter(
    (arg) => typeof arg === "string" && arg.startsWith("-"),
  );
  const listed = /^"codex --help" lists (.+)$/.exec(checks.flags?.detail ?? "")?.[1]?.split(", ") ?? [];
  say(flags.length > 0 && flags.every((flag) => listed.includes(flag)) && listed.length === new Set(flags).size, `flags: the real "codex --help" lists ${[...new Set(flags)].join(", ")}`, checks.flags?.detail);
  say(checks.level?.detail === `${level}, the highest level it enforces within the ceiling ${level}`, `level: ${level} within the ceiling ${level}`, checks.level?.detail);
  say(checks.prompt?.detail === "argv: the first prompt is its last argument", "prompt: its first prompt is an argument", checks.prompt?.detail);
  say(/: 5-hour window 88% left, read 4 minutes ago$/.test(checks.quota?.detail ?? ""), "quota: the reading recorded, its least share left and its age", checks.quota?.detail);
  say(checks.resting?.detail === "not resting", "resting: not resting", checks.resting?.detail);
  const configToml = join(setup.env.CODEX_HOME, "config.toml");
  say(checks["signed-in"]?.detail === `signed in: ${configToml} has a line matching ^\\s*model_provider\\s*=`, "signed-in: its config.toml names a model provider of its own, so it needs no login", checks["signed-in"]?.detail);
  const again = preflight();
  say(again.status === 0 && again.stdout === first.stdout, "a second run, from the cached probes, says the same", again.stdout);
  console.log(`     (preflight took ${first.ms} ms, ${again.ms} ms with the probes cached)`);
}

// --- internal ---

// One entry, codex, with the harness's throwaway home and offline API; nothing else detected.
function writeConfig(configDir, setup) {
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, "config.json"), JSON.stringify({ providers: [{ id: "codex", env: setup.env, args: setup.args }], auto_detect: false }, null, 2));
}
