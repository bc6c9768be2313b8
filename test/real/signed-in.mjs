// Signed in or not, with the real CLIs: in a fresh home with no credentials, providers list says signed_in false
// for every CLI whose manifest can tell (null for the others) and preflight exits 1 naming the command that signs it
// in; the CLIs' own status commands agree. With a credential each takes (a key in the environment, a login written
// by the CLI itself), uuldana says true and the status commands agree again. Nothing here reaches a network.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

import { CREDENTIALS } from "./gates.mjs";

// Each CLI: its manifest's verdict on a fresh home, the command that signs it in, and a credential that signs it in.
const CLIS = {
  codex: { bin: "codex", fresh: false, command: "codex login", credential: "login" },
  gemini: { bin: "gemini", fresh: false, command: "gemini", credential: { GEMINI_API_KEY: "dummy" } },
  "claude-code": { bin: "claude", fresh: false, command: "claude auth login", credential: { ANTHROPIC_API_KEY: "dummy" } },
  qwen: { bin: "qwen", fresh: false, command: "qwen", credential: { OPENAI_API_KEY: "dummy", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "offline-model" } },
  copilot: { bin: "copilot", fresh: null, credential: { GH_TOKEN: "dummy" } },
  opencode: { bin: "opencode", fresh: null },
};

// Variables that name another account's folder: a fresh home must not be read through them.
const FOLDERS = ["CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CURSOR_CONFIG_DIR"];

export async function checkSignedIn({ root, bins, detections, env, check }) {
  const ids = Object.keys(CLIS).filter((id) => detections.get(id)?.path || check(false, `signed-in: ${id} is installed`));
  const clean = Object.fromEntries(Object.entries(env).filter(([name]) => !CREDENTIALS.includes(name) && !FOLDERS.includes(name)));
  const fresh = scratch(ids, clean, bins);
  const listed = list(root, fresh);
  check(listed.status === 0, "signed-in: providers list --json exits 0 in a fresh home", `${listed.status}\n${listed.stderr}`);
  for (const id of ids) {
    const row = listed.rows.find((one) => one.entry === id);
    check(row?.signed_in === CLIS[id].fresh, `signed-in: a fresh home, ${id}: signed_in ${CLIS[id].fresh}`, JSON.stringify(row));
    if (CLIS[id].fresh !== false) continue;
    const said = `not signed in: run "${CLIS[id].command}"`;
    check(JSON.stringify(row?.reasons) === JSON.stringify([said]) && row?.eligible === false, `signed-in: a fresh home, ${id} is not eligible: ${said}`, JSON.stringify(row?.reasons));
    const preflight = uuldana(root, fresh, ["preflight", id]);
    const line = preflight.stdout.split("\n").find((one) => one.startsWith("  ✗ signed-in  "));
    check(preflight.status === 1 && line?.startsWith(`  ✗ signed-in  ${said} (`), `signed-in: preflight ${id} exits 1 naming "${CLIS[id].command}"`, `exit ${preflight.status}\n${preflight.stdout}${preflight.stderr}`);
  }
  // the CLIs' own words on the same fresh homes
  statusAgrees(check, fresh, "codex", ["login", "status"], false);
  statusAgrees(check, fresh, "claude", ["auth", "status"], false);

  // a credential each takes: Codex's own login with an API key (it keeps it in auth.json), the others' variables
  const signed = scratch(ids, clean, bins);
  const login = spawnSync(join(bins, "codex"), ["login", "--with-api-key"], { input: "dummy\n", env: signed.env, encoding: "utf8", timeout: 60_000 });
  check(login.status === 0, "signed-in: codex login --with-api-key writes its login in the fresh CODEX_HOME", `${login.status}\n${login.stdout}${login.stderr}`);
  const keys = Object.assign({}, ...ids.map((id) => (typeof CLIS[id].credential === "object" ? CLIS[id].credential : {})));
  const after = list(root, { ...signed, env: { ...signed.env, ...keys } });
  for (const id of ids.filter((one) => CLIS[one].credential)) {
    const row = after.rows.find((one) => one.entry === id);
    check(row?.signed_in === true && !row.reasons.some((reason) => reason.startsWith("not signed in")), `signed-in: with ${describe(CLIS[id].credential)}, ${id}: signed_in true`, JSON.stringify(row));
  }
  statusAgrees(check, signed, "codex", ["login", "status"], true);
  statusAgrees(check, { ...signed, env: { ...signed.env, ANTHROPIC_API_KEY: "dummy" } }, "claude", ["auth", "status"], true);

  // Codex told to keep its login in a keychain: uuldana cannot tell from files, so preflight asks "codex login status"
  const keyring = scratch(["codex"], clean, bins);
  writeFileSync(join(keyring.env.CODEX_HOME, "config.toml"), 'cli_auth_credentials_store = "keyring"\n');
  const unsure = list(root, keyring);
  check(unsure.rows[0]?.signed_in === null, "signed-in: codex keeping its login in a keychain: signed_in null", JSON.stringify(unsure.rows[0]));
  const asked = uuldana(root, keyring, ["preflight", "codex", "--json"]);
  const detail = JSON.parse(asked.stdout || "[]")[0]?.checks.find((one) => one.name === "signed-in")?.detail;
  check(asked.status === 1 && detail === 'not signed in: run "codex login" ("codex login status" exited 1)', 'signed-in: preflight asks "codex login status" then, which says not signed in', `${asked.status} ${detail}`);
}

// --- internal ---

// A fresh home with uuldana's folders, the priority list of the given CLIs, and each CLI's account folder in it.
function scratch(ids, clean, bins) {
  const home = mkdtempSync(join(tmpdir(), "uuldana-real-signed-in-"));
  const dirs = { UULDANA_CONFIG_DIR: join(home, "uuldana-config"), UULDANA_DATA_DIR: join(home, "uuldana-data"), UULDANA_CACHE_DIR: join(home, "uuldana-cache") };
  mkdirSync(dirs.UULDANA_CONFIG_DIR, { recursive: true });
  // Codex refuses a CODEX_HOME that does not exist
  mkdirSync(join(home, ".codex"));
  writeFileSync(join(dirs.UULDANA_CONFIG_DIR, "config.json"), JSON.stringify({ providers: ids, auto_detect: false }));
  const project = join(home, "project");
  mkdirSync(project);
  return { cwd: project, env: { ...clean, ...dirs, HOME: home, CODEX_HOME: join(home, ".codex"), PATH: `${bins}${delimiter}${clean.PATH}` } };
}

function uuldana(root, where, args) {
  return spawnSync(process.execPath, [join(root, "dist", "core", "cli", "main.js"), ...args], { cwd: where.cwd, env: where.env, encoding: "utf8", timeout: 120_000 });
}

function list(root, where) {
  const run = uuldana(root, where, ["providers", "list", "--json"]);
  let rows = [];
  try {
    rows = JSON.parse(run.stdout);
  } catch {}
  return { status: run.status, stderr: run.stderr, rows };
}

// Whether the CLI's own status command says what uuldana said: exit 0 when signed in, another status when not.
function statusAgrees(check, where, bin, args, signedIn) {
  const run = spawnSync(join(where.env.PATH.split(delimiter)[0], bin), args, { cwd: where.cwd, env: where.env, encoding: "utf8", timeout: 60_000 });
  check(signedIn ? run.status === 0 : typeof run.status === "number" && run.status !== 0, `signed-in: "${bin} ${args.join(" ")}" agrees (${signedIn ? "exit 0" : "a failing exit"})`, `${run.status}\n${run.stdout}${run.stderr}`);
}

function describe(credential) {
  return credential === "login" ? "its own login" : Object.keys(credential).join(", ");
}
