// The real agents started the way a handoff starts them (the ask level's flags and a first prompt) with a throwaway
// home and no account: each screen at which it holds its user — a sign-in, or a question such as trust this folder —
// must be read as that by its manifest's sign_in.screen and asks patterns (readGate), the kind exact, and keys walk
// it to the next one. opencode is left out: offline it draws nothing.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PROMPT = "Summarise the lighthouse notes";

// Variables that would sign a CLI in: a run here must meet each CLI as someone who never signed in.
export const CREDENTIALS = [
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "CLAUDE_CONFIG_DIR",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GENAI_USE_VERTEXAI",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GOOGLE_CLOUD_PROJECT",
  "COPILOT_GITHUB_TOKEN",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "DASHSCOPE_API_KEY",
  "OPENROUTER_API_KEY",
];

const ENTER = "\r";
const DOWN = "\x1b[B";

// Each case: a fresh home (files written into it, the folder made a git repository when asked), the environment
// naming it, and the gates expected in turn, each with the keys that answer it.
const cases = [
  {
    id: "codex",
    name: "a fresh CODEX_HOME",
    env: (home) => ({ CODEX_HOME: home }),
    gates: [
      { kind: "sign-in", line: "Choose how you want to use Codex." },
      { kind: "sign-in", line: "Sign in another way", keys: ["3"] },
    ],
  },
  {
    id: "codex",
    name: "a git repository, with a provider on loopback and a key",
    git: true,
    files: { "config.toml": 'model_provider = "offline"\n[model_providers.offline]\nname = "offline"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\nenv_key = "OFFLINE_KEY"\n' },
    env: (home) => ({ CODEX_HOME: home, OFFLINE_KEY: "offline" }),
    gates: [{ kind: "question", line: "Trust this folder? Codex can read, edit, and run files here, subject to your permission settings. Folder settings" }],
  },
  {
    id: "gemini",
    name: "a fresh GEMINI_CLI_HOME",
    env: (home) => ({ GEMINI_CLI_HOME: home }),
    gates: [
      { kind: "question", line: "Do you trust the files in this folder?" },
      { kind: "sign-in", line: "How would you like to authenticate for this project?", keys: [ENTER] },
      { kind: "sign-in", line: "Enter Gemini API Key", keys: [DOWN, ENTER] },
    ],
  },
  {
    id: "claude-code",
    name: "its onboarding done, no account",
    files: { ".claude.json": JSON.stringify({ hasCompletedOnboarding: true, lastOnboardingVersion: "2.1.332" }) },
    env: () => ({ DISABLE_TELEMETRY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" }),
    gates: [
      { kind: "question", line: "Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source" },
      { kind: "sign-in", line: "⎿ \u00a0Not logged in · Please run /login", keys: [DOWN, ENTER] },
    ],
  },
  {
    id: "qwen",
    name: "a fresh QWEN_HOME",
    env: (home) => ({ QWEN_HOME: join(home, ".qwen") }),
    gates: [
      { kind: "sign-in", line: "Connect a Provider" },
      { kind: "sign-in", line: "Alibaba ModelStudio · Access Method", keys: [ENTER] },
    ],
  },
  {
    id: "copilot",
    name: "a fresh COPILOT_HOME",
    env: (home) => ({ COPILOT_HOME: join(home, ".copilot") }),
    gates: [
      { kind: "question", line: "Confirm folder trust" },
      { kind: "sign-in", line: "Please use /login to sign in to use Copilot", keys: [ENTER] },
    ],
  },
];

export async function checkGates({ root, detections, env, check }) {
  const { spawnAgent } = await import(join(root, "dist", "core", "terminal", "pty.js"));
  const { Screen } = await import(join(root, "dist", "core", "terminal", "screen.js"));
  const { readGate } = await import(join(root, "dist", "core", "registry", "gate.js"));
  const { loadManifestFile } = await import(join(root, "dist", "core", "registry", "manifest.js"));
  const base = Object.fromEntries(Object.entries(env).filter(([key]) => !CREDENTIALS.includes(key)));
  for (const one of cases) {
    const bin = detections.get(one.id)?.path;
    if (!bin) {
      check(false, `${one.id} (${one.name}): installed`);
      continue;
    }
    const manifest = (await loadManifestFile(join(root, "manifests", `${one.id}.json`), "built-in")).manifest;
    const home = mkdtempSync(join(tmpdir(), `uuldana-real-gate-${one.id}-`));
    const cwd = join(home, "lighthouse");
    mkdirSync(cwd);
    if (one.git) execFileSync("git", ["init", "-q"], { cwd });
    for (const [file, text] of Object.entries(one.files ?? {})) writeFileSync(join(home, file), text);
    const screen = new Screen({ cols: 120, rows: 40 });
    const agent = spawnAgent({
      file: bin,
      args: [...(manifest.args ?? []), ...(manifest.levels.ask.args ?? []), ...promptArgs(manifest)],
      env: { ...base, TERM: "xterm-256color", HOME: home, ...one.env(home), ...(manifest.levels.ask.env ?? {}) },
      cwd,
      cols: 120,
      rows: 40,
      term: "xterm-256color",
    });
    screen.onReply((reply) => agent.write(reply));
    agent.onData((data) => screen.write(data));
    let exited;
    agent.exited.then((exit) => (exited = exit));
    for (const expected of one.gates) {
      for (const key of expected.keys ?? []) {
        agent.write(key);
        await sleep(500);
      }
      const what = `${one.id} (${one.name}): ${expected.keys ? `after ${expected.keys.map(keyName).join(", ")}, ` : ""}its screen reads as ${expected.kind} ("${expected.line}")`;
      let gate;
      let visible = [];
      const deadline = Date.now() + 40_000;
      while (Date.now() < deadline && !exited) {
        visible = (await screen.read()).visible;
        gate = readGate(visible, manifest);
        if (gate?.line === expected.line) break;
        await sleep(250);
      }
      const ok = gate?.kind === expected.kind && gate.line === expected.line;
      check(ok, what, `${exited ? `exited ${JSON.stringify(exited)}\n` : ""}read ${JSON.stringify(gate)}\n${visible.filter((line) => line.trim()).slice(-14).join("\n")}`);
      if (!ok) break;
      // the screen settles before keys answer it, so none is lost in a redraw
      await sleep(1500);
    }
    agent.signal("SIGKILL");
    await Promise.race([agent.exited, sleep(3000)]);
  }
}

// A first prompt as a handoff gives it, by the manifest's prompt mode.
function promptArgs(manifest) {
  if (manifest.prompt?.mode === "argv") return [PROMPT];
  if (manifest.prompt?.mode === "flag") return [manifest.prompt.flag, PROMPT];
  return [];
}

function keyName(key) {
  return key === ENTER ? "Enter" : key === DOWN ? "Down" : `"${key}"`;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

