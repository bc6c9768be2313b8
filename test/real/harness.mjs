// How to bring each real agent CLI to a screen that shows its permission mode, offline and without an
// account: a throwaway home, settings that skip sign-in, and an API address on loopback where nothing listens.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// an API address on loopback where nothing listens, unless a test passes its own server
const NOWHERE = "http://127.0.0.1:9";

function scratch(prefix) {
  return mkdtempSync(join(tmpdir(), `uuldana-real-${prefix}-`));
}

// Each harness: setup() → { env, args, cwd, answers }, where answers are [screen pattern, keys to type] pairs
// played once each, and modes maps a ceiling level to the text the CLI shows for that mode.
export const harnesses = {
  "claude-code": {
    package: "@anthropic-ai/claude-code",
    setup({ base = NOWHERE, cwd = scratch("claude-cwd") } = {}) {
      const home = scratch("claude");
      const state = {
        hasCompletedOnboarding: true,
        lastOnboardingVersion: "2.1.197",
        projects: { [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      };
      writeFileSync(join(home, ".claude.json"), JSON.stringify(state));
      return {
        cwd,
        args: [],
        env: {
          HOME: home,
          ANTHROPIC_BASE_URL: base,
          CLAUDE_CODE_OAUTH_TOKEN: "offline-test-token",
          DISABLE_TELEMETRY: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          // the bypass level refuses to start as root outside a sandbox; these checks run in one
          IS_SANDBOX: "1",
        },
        answers: [],
      };
    },
    modes: {
      "read-only": /plan mode on/,
      ask: /\? for shortcuts/,
      "auto-edit": /accept edits on/,
      "full-access": /Bypass Permissions mode/i,
    },
  },
  codex: {
    package: "@openai/codex",
    setup({ base = NOWHERE, cwd = scratch("codex-cwd") } = {}) {
      const home = scratch("codex");
      const config = [
        'model_provider = "offline"',
        "[model_providers.offline]",
        'name = "offline"',
        `base_url = "${base}/v1"`,
        'wire_api = "responses"',
        'env_key = "OFFLINE_KEY"',
        "",
      ].join("\n");
      writeFileSync(join(home, "config.toml"), config);
      return {
        cwd,
        args: [],
        env: { HOME: home, CODEX_HOME: home, OFFLINE_KEY: "offline" },
        answers: [[/Ask Codex to do anything/, ["/status", "\r"]]],
      };
    },
    modes: {
      "read-only": /Permissions:\s+Read Only \(never\)/,
      ask: /Permissions:\s+Read Only \(Ask for approval\)/,
      "auto-edit": /Permissions:\s+Workspace \(Ask for approval\)/,
      "full-access": /permissions: YOLO mode/,
    },
  },
  gemini: {
    package: "@google/gemini-cli",
    setup({ base = NOWHERE, cwd = scratch("gemini-cwd") } = {}) {
      const home = scratch("gemini");
      mkdirSync(join(home, ".gemini"));
      writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }));
      return {
        cwd,
        args: ["--skip-trust"],
        env: { HOME: home, GEMINI_CLI_HOME: home, GEMINI_API_KEY: "offline", GOOGLE_GEMINI_BASE_URL: base },
        answers: [],
      };
    },
    modes: {
      "read-only": / plan Shift\+Tab/,
      ask: /Shift\+Tab to accept edits/,
      "auto-edit": /auto-accept edits/,
      "full-access": /YOLO Ctrl\+Y/,
    },
  },
  qwen: {
    package: "@qwen-code/qwen-code",
    setup() {
      const home = scratch("qwen");
      writeFileSync(join(home, "settings.json"), JSON.stringify({ security: { auth: { selectedType: "openai" } }, model: { name: "offline-model" } }));
      return {
        cwd: scratch("qwen-cwd"),
        args: [],
        env: { HOME: home, QWEN_HOME: home, OPENAI_API_KEY: "offline", OPENAI_BASE_URL: `${NOWHERE}/v1`, OPENAI_MODEL: "offline-model" },
        answers: [],
      };
    },
    modes: {
      "read-only": /plan mode \(shift \+ tab to cycle\)/,
      // older versions show no mode for the default, newer ones name it
      ask: /\? for shortcuts|Ask permissions \(shift \+ tab to cycle\)/,
      "auto-edit": /auto-accept edits \(shift \+ tab to cycle\)/,
      "full-access": /YOLO mode \(shift \+ tab to cycle\)/,
    },
  },
  copilot: {
    package: "@github/copilot",
    setup() {
      const home = scratch("copilot");
      return {
        cwd: scratch("copilot-cwd"),
        args: [],
        env: { HOME: home, COPILOT_HOME: home },
        answers: [[/Do you trust the files in this folder\?/, ["1"]]],
      };
    },
    modes: {
      "read-only": /Plan · Manual Approval/,
      ask: /Interactive · Manual Approval/,
      "auto-edit": /Interactive · Manual Approval/,
      "full-access": /Interactive · Allow All/,
    },
  },
  opencode: {
    package: "opencode-ai",
    setup() {
      const home = scratch("opencode");
      return {
        cwd: scratch("opencode-cwd"),
        args: [],
        env: { HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") },
        answers: [],
      };
    },
    // agent names such as "plan" are listed by "opencode agent list", not by --help
    moreHelp: [["agent", "list"]],
    // its offline screen stays blank; "opencode agent list" shows the rules a level's environment sets instead
    modes: {},
    rules: {
      args: ["agent", "list"],
      agent: { "read-only": "plan", ask: "build", "auto-edit": "build" },
      expect: {
        "read-only": { read: "allow", edit: "deny", bash: "deny", webfetch: "deny" },
        ask: { read: "allow", edit: "ask", bash: "ask", webfetch: "ask" },
        "auto-edit": { read: "allow", edit: "allow", bash: "ask", webfetch: "ask" },
      },
    },
  },
};
