// npm run test:real — checks every built-in manifest against the real agent CLI it describes:
// the version pattern matches and gives the version its npm package's package.json holds, every flag it uses is in
// the CLI's --help, and the CLI started with each level's flags accepts them and (where its screen names the mode)
// shows the right one.
// The CLIs install from npm into a cache folder outside the clone, reused by later runs.
// UULDANA_REAL_CHECKS=gates,limits runs only those groups, after the install and detection every group needs (unset:
// all): flags (versions, --help, levels), hosted, limits, automation, transcripts, preflight, failover, quota, rotate,
// model-switch, gates, receivers, signed-in.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { harnesses } from "./harness.mjs";
import { READY, checkHosted, checkTerminalRestored } from "./host.mjs";
import { checkFailoverChain } from "./failover.mjs";
import { checkGates } from "./gates.mjs";
import { checkReceivers } from "./receivers.mjs";
import { checkLimitScreens } from "./limits.mjs";
import { checkAutomation } from "./automation.mjs";
import { checkModelSwitch } from "./model-switch.mjs";
import { checkPreflight } from "./preflight.mjs";
import { checkQuota as checkClaudeQuota } from "./quota-claude-code.mjs";
import { checkQuota as checkCodexQuota } from "./quota-codex.mjs";
import { checkRotation } from "./rotate.mjs";
import { checkSignedIn } from "./signed-in.mjs";
import { checkUntrustedSettings } from "./untrusted-settings.mjs";
import { checkTranscript as checkClaudeTranscript } from "./transcript-claude-code.mjs";
import { checkTranscript as checkCodexTranscript } from "./transcript-codex.mjs";
import { checkTranscript as checkGeminiTranscript } from "./transcript-gemini.mjs";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const require = createRequire(join(root, "package.json"));
const pty = require("node-pty");
const { Terminal } = require("@xterm/headless");
const { detectProviders } = await import(join(root, "dist", "core", "registry", "detect.js"));

// every scratch folder of this run (homes, projects, config folders, and what the CLIs themselves put in the
// temporary folder) lives under one, removed at the end; UULDANA_REAL_KEEP=1 keeps it to look at
const scratchRoot = mkdtempSync(join(tmpdir(), "uuldana-real-"));
process.env.TMPDIR = scratchRoot;

const cache = process.env.UULDANA_REAL_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "uuldana-real-agents");
const USAGE_ERROR = /unknown option|unexpected argument|invalid value|invalid choice|is invalid|not a valid|unknown argument|invalid values|unrecognized/i;
const only = process.env.UULDANA_REAL_CHECKS?.split(",").map((group) => group.trim()).filter(Boolean);
const wanted = (group) => !only || only.includes(group);
let passed = 0;
const failures = [];

function check(ok, text, detail = "") {
  if (ok) passed++;
  else failures.push(text);
  console.log(`${ok ? "ok  " : "FAIL"} ${text}${!ok && detail ? `\n     ${detail.replace(/\n/g, "\n     ")}` : ""}`);
}

function install() {
  mkdirSync(cache, { recursive: true });
  const manifest = join(cache, "package.json");
  writeFileSync(manifest, JSON.stringify({ name: "uuldana-real-agents", private: true }, null, 2));
  const packages = Object.values(harnesses).map((h) => `${h.package}@latest`);
  console.log(`installing ${packages.join(" ")} into ${cache}`);
  const run = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...packages], { cwd: cache, encoding: "utf8" });
  if (run.status !== 0) {
    console.error(`cannot install the real agent CLIs from npm (exit ${run.status}):\n${run.stderr}`);
    console.log("failed: install the real agent CLIs\n0 passed, 1 failed");
    process.exit(1);
  }
}

function flagsOf(manifest) {
  const lists = [manifest.args ?? [], ...Object.values(manifest.levels ?? {}).map((level) => level.args ?? [])];
  if (manifest.prompt?.flag) lists.push([manifest.prompt.flag]);
  if (manifest.models?.flag) lists.push([manifest.models.flag]);
  // the flags that choose the CLI's session id, and those with which it picks a session itself
  if (manifest.session_id) lists.push(manifest.session_id.args.filter((arg) => arg.startsWith("-")), manifest.session_id.unless ?? []);
  if (manifest.quota?.settings_flag) lists.push([manifest.quota.settings_flag]);
  return lists;
}

function helpText(bin, args) {
  const run = spawnSync(bin, args, { cwd: tmpdir(), encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  return `${run.stdout}\n${run.stderr}`;
}

function mentions(help, word) {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[\\s,\\[("'=])${escaped}(?=[\\s,=\\]<)"'.:]|$)`, "m").test(help);
}

// Every flag, and every value given to a flag, must appear in the CLI's own help.
function checkHelp(id, manifest, bin) {
  const help = [["--help"], ...(harnesses[id].moreHelp ?? [])].map((args) => helpText(bin, args)).join("\n");
  const words = new Set();
  for (const list of flagsOf(manifest)) {
    for (const arg of list) {
      const [flag, value] = arg.split("=", 2);
      words.add(flag);
      if (value) words.add(value);
    }
    list.forEach((arg, i) => {
      if (!arg.startsWith("-") && i > 0) words.add(arg);
    });
  }
  for (const word of words) check(mentions(help, word), `${id}: "${word}" appears in --help`);
  const resume = manifest.resume?.args ?? [];
  if (resume.length) {
    const sub = resume[0].startsWith("-") ? [] : [resume[0]];
    const subHelp = sub.length ? helpText(bin, [...sub, "--help"]) : help;
    for (const arg of resume.slice(sub.length)) if (arg.startsWith("-")) check(mentions(subHelp, arg), `${id}: resume flag "${arg}" appears in ${[...sub, "--help"].join(" ")}`);
  }
}

// Some CLIs (gemini) run headless whenever the environment looks like CI, even in a terminal.
function withoutCi(env) {
  return Object.fromEntries(
    Object.entries(env).filter(([key]) => key !== "CI" && key !== "CONTINUOUS_INTEGRATION" && key !== "BUILD_NUMBER" && key !== "RUN_ID" && !key.startsWith("CI_")),
  );
}

// Starts the CLI in a real pseudo-terminal with one level's flags and reads its screen until it shows the mode.
async function checkLevel(id, manifest, bin, level) {
  const harness = harnesses[id];
  const setup = harness.setup();
  const flags = manifest.levels[level];
  const args = [...(manifest.args ?? []), ...setup.args, ...(flags.args ?? [])];
  const env = { ...withoutCi(process.env), TERM: "xterm-256color", ...setup.env, ...(flags.env ?? {}) };
  const term = new Terminal({ cols: 120, rows: 40, allowProposedApi: true });
  const child = pty.spawn(bin, args, { name: "xterm-256color", cols: 120, rows: 40, cwd: setup.cwd, env });
  let exit;
  const answered = new Set();
  child.onData((data) => term.write(data));
  term.onData((reply) => child.write(reply));
  child.onExit((event) => (exit = event));
  const expected = harness.modes[level];
  const screen = () => {
    const buffer = term.buffer.active;
    const lines = [];
    for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? "");
    return lines.join("\n");
  };
  const started = Date.now();
  let text = "";
  while (!exit && Date.now() - started < 25_000) {
    await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => term.write("", r));
    text = screen();
    for (const [pattern, keys] of setup.answers) {
      if (answered.has(pattern) || !pattern.test(text)) continue;
      answered.add(pattern);
      for (const key of keys) {
        child.write(key);
        await new Promise((r) => setTimeout(r, 400));
      }
    }
    if (expected ? expected.test(text) : Date.now() - started > 6_000) break;
  }
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
  const shown = text.split("\n").filter((line) => line.trim()).slice(-12).join("\n");
  const rejected = USAGE_ERROR.test(text) || (exit && exit.exitCode !== 0);
  check(!rejected, `${id} at ${level}: ${args.join(" ")} is accepted`, `${exit ? `exited ${JSON.stringify(exit)}\n` : ""}${shown}`);
  if (expected) check(expected.test(text), `${id} at ${level}: the screen shows ${expected}`, shown);
}

// For a CLI whose screen does not name the mode, ask it which rules a level's environment gives its agents.
function checkRules(id, manifest, bin) {
  const rules = harnesses[id].rules;
  if (!rules) return;
  for (const [level, expected] of Object.entries(rules.expect)) {
    const setup = harnesses[id].setup();
    const env = { ...process.env, ...setup.env, ...(manifest.levels[level]?.env ?? {}) };
    const run = spawnSync(bin, rules.args, { cwd: setup.cwd, env, encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
    const agent = rules.agent[level];
    const block = new RegExp(`^${agent} \\(\\w+\\)\\n(\\s*\\[[\\s\\S]*?\\n\\s*\\])`, "m").exec(run.stdout);
    const list = block ? JSON.parse(block[1]) : [];
    const actual = {};
    for (const permission of Object.keys(expected)) {
      const last = list.filter((rule) => rule.pattern === "*" && (rule.permission === permission || rule.permission === "*")).at(-1);
      actual[permission] = last?.action;
    }
    check(JSON.stringify(actual) === JSON.stringify(expected), `${id} at ${level}: its ${agent} agent gets ${JSON.stringify(expected)}`, JSON.stringify(actual));
  }
}

install();
const bins = join(cache, "node_modules", ".bin");
const manifests = readdirSync(join(root, "manifests")).map((file) => JSON.parse(readFileSync(join(root, "manifests", file), "utf8")));
const tested = manifests.filter((manifest) => harnesses[manifest.id]);
for (const manifest of manifests) if (!harnesses[manifest.id]) console.log(`skip ${manifest.id}: not installable from npm here`);

// the probes run without npm_package, else each package's own version would answer first and the patterns go untested;
// they check the pattern against what the real CLI prints, not how fast it starts, so each gets the longest budget a
// manifest may give (in CI right after the full suites, a CLI's first answer has taken longer than the default 8 s)
const patient = (manifest) => ({ ...manifest, version: { ...manifest.version, timeout_seconds: 60 } });
const detect = (manifests) =>
  detectProviders(manifests, {
    env: { ...process.env, PATH: `${bins}${delimiter}${process.env.PATH}` },
    cacheDir: mkdtempSync(join(tmpdir(), "uuldana-real-cache-")),
  });
const detections = await detect(tested.map(({ npm_package, ...manifest }) => patient(manifest)));
const packaged = await detect(tested);
for (const manifest of wanted("flags") ? tested : []) {
  const found = detections.get(manifest.id);
  check(found?.recognised === true, `${manifest.id}: version ${found?.version ?? "?"} recognised by its pattern`, found?.problem ?? "");
  const fromPackage = packaged.get(manifest.id);
  check(
    manifest.npm_package === harnesses[manifest.id].package && fromPackage?.versionFrom === "package" && fromPackage.version === found?.version,
    `${manifest.id}: the package.json of ${manifest.npm_package} gives the version --version prints`,
    `npm_package ${manifest.npm_package}, installed from ${harnesses[manifest.id].package}; package.json: ${fromPackage?.version} (${fromPackage?.versionFrom}), --version: ${found?.version}`,
  );
  if (!found?.path) continue;
  checkHelp(manifest.id, manifest, found.path);
  checkRules(manifest.id, manifest, found.path);
}

const jobs = (wanted("flags") ? tested : []).flatMap((manifest) =>
  Object.keys(manifest.levels ?? {}).map((level) => () => checkLevel(manifest.id, manifest, detections.get(manifest.id).path, level)),
);
const running = new Set();
for (const job of jobs) {
  const promise = job().finally(() => running.delete(promise));
  running.add(promise);
  if (running.size >= 3) await Promise.race(running);
}
await Promise.all(running);

for (const id of wanted("hosted") ? Object.keys(READY) : []) {
  const path = detections.get(id)?.path;
  if (!path) continue;
  await checkHosted({ root, id, bin: path, env: withoutCi(process.env), check });
  await checkTerminalRestored({ root, id, bins, env: withoutCi(process.env), check });
}
const groups = [
  ["limits", checkLimitScreens],
  ["automation", checkAutomation],
  ["transcripts", checkClaudeTranscript],
  ["transcripts", checkCodexTranscript],
  ["transcripts", checkGeminiTranscript],
  ["preflight", checkPreflight],
  ["failover", checkFailoverChain],
  ["quota", checkClaudeQuota],
  ["quota", checkCodexQuota],
  ["quota", checkUntrustedSettings],
  ["rotate", checkRotation],
  ["model-switch", checkModelSwitch],
  ["gates", checkGates],
  ["receivers", checkReceivers],
  ["signed-in", checkSignedIn],
];
for (const [group, checkOne] of groups) if (wanted(group)) await checkOne({ root, bins, detections, env: withoutCi(process.env), check });
if (process.env.UULDANA_REAL_KEEP) console.log(`scratch folders kept in ${scratchRoot}`);
else rmSync(scratchRoot, { recursive: true, force: true });
// the lines CI reads: each failed check again, then the count
for (const text of failures) console.log(`failed: ${text}`);
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length > 0 ? 1 : 0);
