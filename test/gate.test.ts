import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { readGate, type Gate } from "../core/registry/gate.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import type { Manifest } from "../core/registry/types.js";
import { fixtures, root } from "./helpers.js";

// The built-in manifests' sign_in.screen and asks patterns against every screen the real CLIs drew
// (test/fixtures/screens/README.md says how each was captured). Pure: no process is started.

const screens = join(fixtures, "screens");
const ids = readdirSync(screens, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
const manifests = new Map<string, Manifest>();
for (const id of ids) {
  const record = await loadManifestFile(join(root, "manifests", `${id}.json`), "built-in");
  manifests.set(id, record.manifest!);
}
const rows = (id: string, file: string): string[] => readFileSync(join(screens, id, file), "utf8").split("\n");
const manifest = (id: string): Manifest => manifests.get(id)!;

const signIn = (line: string): Gate => ({ kind: "sign-in", line });
const question = (line: string): Gate => ({ kind: "question", line });

// Each sign-in or question screen captured, and the gate it reads as: the first line that says so, without its frame.
const gates: [string, string, Gate][] = [
  ["claude-code", "2.1.332-theme.txt", question("Choose the text style that looks best with your terminal")],
  ["claude-code", "2.1.332-sign-in.txt", signIn("Select login method:")],
  ["claude-code", "2.1.332-sign-in-browser.txt", signIn("Browser didn't open? Use the URL below to sign in (c to copy)")],
  [
    "claude-code",
    "2.1.332-trust.txt",
    question("Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source"),
  ],
  ["claude-code", "2.1.332-not-logged-in.txt", signIn("⎿ \u00a0Not logged in · Please run /login")],
  ["claude-code", "2.1.332-not-logged-in-footer.txt", signIn("⎿ \u00a0Not logged in · Please run /login")],
  ["claude-code", "2.1.332-login.txt", signIn("Select login method:")],
  ["codex", "0.171.0-sign-in.txt", signIn("Choose how you want to use Codex.")],
  ["codex", "0.171.0-sign-in-browser.txt", signIn("Finish signing in via your browser")],
  ["codex", "0.171.0-sign-in-device-code-failed.txt", signIn("Choose how you want to use Codex.")],
  ["codex", "0.171.0-sign-in-another-way.txt", signIn("Sign in another way")],
  ["codex", "0.171.0-sign-in-api-key.txt", signIn("Paste or type your API key below.")],
  [
    "codex",
    "0.171.0-trust.txt",
    question("Trust this folder? Codex can read, edit, and run files here, subject to your permission settings. Folder settings"),
  ],
  ["copilot", "1.0.102-trust.txt", question("Confirm folder trust")],
  ["copilot", "1.0.102-sign-in.txt", signIn("Please use /login to sign in to use Copilot")],
  ["copilot", "1.0.102-login-account.txt", signIn("What account do you want to log into?")],
  ["copilot", "1.0.102-login-method.txt", signIn("How do you want to sign in?")],
  ["copilot", "1.0.102-login-browser.txt", signIn("Opening your browser to sign in. If it does not open automatically, visit:")],
  [
    "copilot",
    "1.0.102-login-device-failed.txt",
    signIn("Error during sign-in: Error: request failed: error sending request for url (https://github.com/login/device/code)"),
  ],
  ["gemini", "0.61.0-trust.txt", question("Do you trust the files in this folder?")],
  ["gemini", "0.61.0-sign-in.txt", signIn("How would you like to authenticate for this project?")],
  ["gemini", "0.61.0-sign-in-google.txt", signIn("Please visit the following URL to authorize the application:")],
  ["gemini", "0.61.0-sign-in-api-key.txt", signIn("Enter Gemini API Key")],
  ["qwen", "0.24.4-sign-in.txt", signIn("Connect a Provider")],
  ["qwen", "0.24.4-sign-in-modelstudio.txt", signIn("Alibaba ModelStudio · Access Method")],
  ["qwen", "0.24.4-sign-in-third-party.txt", signIn("Third-party Providers · Provider")],
  ["qwen", "0.24.4-sign-in-custom.txt", signIn("Custom Provider · Step 1/7 · Protocol")],
];

// Every other screen captured: started and ready (Claude Code's too, which says nothing of its missing sign-in until
// a prompt is sent), working, answers, warnings, limit screens and menus, model switches.
const others = ids.flatMap((id) =>
  readdirSync(join(screens, id))
    .filter((file) => !gates.some(([gateId, gateFile]) => gateId === id && gateFile === file))
    .map((file): [string, string] => [id, file]),
);

// A conversation about signing in, drawn the way each CLI draws a turn: the user's words and the agent's answer
// quote the sign-in screens' own words inside sentences, bullets and code.
const talk: [string, string[]][] = [
  [
    "claude-code",
    [
      "❯ codex shows Choose how you want to use Codex. and gemini says Enter the authorization code: so how do I sign in?",
      "● Each CLI signs in its own way:",
      "  - Claude Code: run claude auth login, or /login, which opens Select login method:",
      "  - a footer saying Not logged in · run /login means the token is gone",
      "  `Please run /login` is printed after a prompt when nobody is signed in.",
    ],
  ],
  [
    "codex",
    [
      "› It said Finish signing in via your browser and then Paste or type your API key below. What now?",
      "• Pick one of the options under Choose how you want to use Codex.:",
      "  • Sign in another way",
      "  • Paste or type your API key below.",
      "  Then answer Trust this folder? Codex can read, edit, and run files here, once.",
    ],
  ],
  [
    "gemini",
    [
      " > Do you trust the files in this folder? How would you like to authenticate for this project?",
      "✦ Choose a method in the dialog:",
      "   - Sign in with Google prints Please visit the following URL to authorize the application:",
      "  Enter the authorization code: then waits for the code from the page.",
    ],
  ],
  [
    "copilot",
    [
      "❯ Please use /login to sign in to use Copilot — what does that mean?",
      "● It means no token was found. Run copilot login; it asks How do you want to sign in?",
      "  and What account do you want to log into? before Opening your browser to sign in.",
    ],
  ],
  ["qwen", [" > I see Connect a Provider and Third-party Providers · Provider, which one?", "✦ Choose Custom Provider · Step 1/7 · Protocol for a local server."]],
];

describe("readGate", () => {
  it.each(gates)("reads %s's %s", (id, file, gate) => {
    expect(readGate(rows(id, file), manifest(id))).toEqual(gate);
  });

  it.each(others)("reads no gate on %s's %s", (id, file) => {
    expect(readGate(rows(id, file), manifest(id))).toBeUndefined();
  });

  it("is given every screen captured, each gate's file among them", () => {
    expect(ids).toEqual(["claude-code", "codex", "copilot", "gemini", "qwen"]);
    for (const [id, file] of gates) expect(readdirSync(join(screens, id))).toContain(file);
    expect(others.length).toBeGreaterThanOrEqual(50);
  });

  it.each(talk)("reads no gate on a conversation with %s about signing in", (id, lines) => {
    expect(readGate(lines, manifest(id))).toBeUndefined();
  });

  it.each([
    ["the footer alone", ["                                                                    Not logged in · run /login"], signIn("Not logged in · run /login")],
    ["a revoked token", ["  ⎿  OAuth token revoked · Please run /login"], signIn("⎿  OAuth token revoked · Please run /login")],
  ])("reads Claude Code's %s", (_name, lines, gate) => {
    expect(readGate(lines, manifest("claude-code"))).toEqual(gate);
  });

  it.each([
    ["the browser", [" ◎ Waiting for authorization in your browser..."], signIn("◎ Waiting for authorization in your browser...")],
    ["a device code", [" ⠸ Waiting for authorization...", "", " Enter one-time code: CA8D-C2B6 at https://github.com/login/device"], signIn("⠸ Waiting for authorization...")],
  ])("reads Copilot waiting for %s", (_name, lines, gate) => {
    expect(readGate(lines, manifest("copilot"))).toEqual(gate);
  });

  it("reads a sign-in line before a question line on the same screen", () => {
    const patterns = { sign_in: { screen: ["^Sign in to Stand-in$"] }, asks: ["^Trust this folder\\?$"] };
    expect(readGate(["Trust this folder?", "Sign in to Stand-in"], patterns)).toEqual(signIn("Sign in to Stand-in"));
    expect(readGate(["Trust this folder?", "Sign in later"], patterns)).toEqual(question("Trust this folder?"));
  });

  it("reads nothing with a manifest that has neither field", () => {
    expect(readGate(rows("codex", "0.171.0-sign-in.txt"), { sign_in: { command: "codex login" } })).toBeUndefined();
    expect(readGate([], manifest("codex"))).toBeUndefined();
  });
});
