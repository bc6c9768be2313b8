import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import type { Level } from "../core/config/levels.js";
import { strayPermissionFlag } from "../core/registry/permission-flags.js";
import type { Manifest } from "../core/registry/types.js";
import { linkAgent, makeSandbox, root, signInBuiltIns, type Sandbox } from "./helpers.js";

const builtIn = (id: string): Manifest => JSON.parse(readFileSync(join(root, "manifests", `${id}.json`), "utf8")) as Manifest;
const EXECUTABLES: Record<string, string> = { "claude-code": "claude", codex: "codex", gemini: "gemini", qwen: "qwen", copilot: "copilot", opencode: "opencode" };
const OWN: Record<string, string> = {
  "claude-code": "--permission-mode default",
  codex: "--sandbox read-only --ask-for-approval on-request",
  gemini: "--approval-mode default",
  qwen: "--approval-mode default",
  copilot: "--mode interactive",
  opencode: "OPENCODE_PERMISSION=…",
};

describe("the permission flags an argument list carries", () => {
  it.each<[string, Level, string[], string | undefined]>([
    ["claude-code", "ask", ["--dangerously-skip-permissions"], "--dangerously-skip-permissions"],
    ["claude-code", "ask", ["--permission-mode", "bypassPermissions"], "--permission-mode bypassPermissions"],
    ["claude-code", "ask", ["--permission-mode=acceptEdits"], "--permission-mode=acceptEdits"],
    // a value that asks for less is refused too: only the level's own flags are the level
    ["claude-code", "ask", ["--permission-mode", "plan"], "--permission-mode plan"],
    ["claude-code", "ask", ["--permission-mode"], "--permission-mode"],
    ["claude-code", "ask", ["--permission-mode", "default"], undefined],
    ["claude-code", "ask", ["--permission-mode=default"], undefined],
    ["claude-code", "ask", ["--model", "opus", "fix the -y flag"], undefined],
    ["claude-code", "ask", ["--allowedTools", "Bash"], "--allowedTools"],
    ["claude-code", "full-access", ["--permission-mode", "bypassPermissions"], undefined],
    ["claude-code", "full-access", ["--dangerously-skip-permissions"], "--dangerously-skip-permissions"],
    ["codex", "ask", ["--yolo"], "--yolo"],
    ["codex", "ask", ["--sandbox", "danger-full-access"], "--sandbox danger-full-access"],
    ["codex", "ask", ["-sdanger-full-access"], "-sdanger-full-access"],
    ["codex", "ask", ["-s=read-only"], "-s=read-only"],
    ["codex", "ask", ["--ask-for-approval", "on-request", "--sandbox", "read-only"], undefined],
    ["codex", "ask", ["-m", "o3"], undefined],
    // a configuration value that sets the sandbox or the approvals is a permission flag too, in every spelling
    ["codex", "ask", ["-c", "sandbox_mode=danger-full-access"], "-c sandbox_mode=danger-full-access"],
    ["codex", "ask", ["--config", 'approval_policy="never"'], '--config approval_policy="never"'],
    ["codex", "ask", ["--config=sandbox_workspace_write.network_access=true"], "--config=sandbox_workspace_write.network_access=true"],
    ["codex", "ask", ["-cprofile=yolo"], "-cprofile=yolo"],
    ["codex", "ask", ["-c", "model_reasoning_effort=high", "-c", "model=o3"], undefined],
    ["codex", "ask", ["--profile", "work"], "--profile"],
    ["claude-code", "ask", ["--settings", '{"permissions":{"defaultMode":"bypassPermissions"}}'], "--settings"],
    ["gemini", "ask", ["--approval-mode", "yolo"], "--approval-mode yolo"],
    ["gemini", "ask", ["--approvalMode=yolo"], "--approvalMode=yolo"],
    ["gemini", "ask", ["-y"], "-y"],
    ["gemini", "ask", ["-dy"], "-dy"],
    ["gemini", "ask", ["--no-sandbox"], "--no-sandbox"],
    ["gemini", "full-access", ["--approval-mode", "yolo"], undefined],
    ["qwen", "auto-edit", ["--approval-mode", "auto-edit", "--yolo"], "--yolo"],
    ["copilot", "auto-edit", ["--allow-tool", "write"], undefined],
    ["copilot", "auto-edit", ["--allow-tool=shell"], "--allow-tool=shell"],
    ["copilot", "ask", ["--deny-tool=shell"], "--deny-tool=shell"],
    ["opencode", "ask", ["--auto"], "--auto"],
    ["opencode", "read-only", ["--agent", "plan"], undefined],
    ["aider", "read-only", ["--yes-always"], "--yes-always"],
    ["cursor-agent", "read-only", ["-f"], "-f"],
    // aider takes the beginning of a long flag for the flag
    ["aider", "read-only", ["--yes-al"], "--yes-al"],
    ["aider", "read-only", ["--chat-m", "code"], "--chat-m code"],
    ["aider", "read-only", ["--chat-mode", "ask"], undefined],
    ["aider", "read-only", ["--model", "sonnet", "--no-auto-commits"], undefined],
    ["claude-code", "ask", ["--dangerously"], undefined],
  ])("%s at %s, %j: %s", (id, level, args, stray) => {
    expect(strayPermissionFlag(args, builtIn(id), level)).toBe(stray);
  });

  it("are listed by every manifest that comes with uuldana", () => {
    const folders = [join(root, "manifests"), join(root, "examples", "demo", "manifests")];
    const manifests = folders.flatMap((folder) => readdirSync(folder).map((file) => JSON.parse(readFileSync(join(folder, file), "utf8")) as Manifest));
    expect(manifests.length).toBe(11);
    for (const manifest of manifests) expect(manifest.permission_flags?.length, manifest.id).toBeGreaterThan(0);
  });
});

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = makeSandbox();
  for (const name of Object.values(EXECUTABLES)) linkAgent(sandbox, name, "real-version.sh");
  signInBuiltIns(sandbox);
});
afterEach(() => sandbox.cleanup());

describe("arguments after -- that carry a permission flag", () => {
  it.each([
    ["claude-code", ["--dangerously-skip-permissions"], "--dangerously-skip-permissions"],
    ["claude-code", ["--permission-mode", "bypassPermissions"], "--permission-mode bypassPermissions"],
    ["codex", ["--yolo"], "--yolo"],
    ["codex", ["--sandbox=danger-full-access"], "--sandbox=danger-full-access"],
    ["gemini", ["--approval-mode", "yolo"], "--approval-mode yolo"],
    ["qwen", ["-y"], "-y"],
    ["copilot", ["--allow-all-tools"], "--allow-all-tools"],
    ["opencode", ["--auto"], "--auto"],
  ])("%s, %j: run exits 2 naming the flag and how to raise the ceiling", async (id, args, flag) => {
    sandbox.write("config/config.json", { providers: [id], auto_detect: false });
    expect(await sandbox.run(["run", "--", ...args])).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: the arguments after -- carry the permission flag "${flag}", which is not the level's own (${id} at ask: ${OWN[id]}) [E_PERMISSION_FLAG]`,
        `hint: remove it; to let agents do more, run with --ceiling, or raise "ceiling" in ${sandbox.config}/config.json`,
        "",
      ].join("\n"),
    });
    const sessions = readdirSync(join(sandbox.data, "sessions"));
    const journal = readFileSync(join(sandbox.data, "sessions", sessions[0]!, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(journal.map((event) => event.type)).toEqual(["session-start", "session-end"]);
    expect(journal[1]).toMatchObject({ exit_code: 2 });
  });

  it("at full-access, where raising the ceiling cannot help, says to remove it", async () => {
    sandbox.write("config/config.json", { providers: ["claude-code"], auto_detect: false, ceiling: "full-access" });
    const run = await sandbox.run(["run", "--", "--dangerously-skip-permissions"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'uuldana: the arguments after -- carry the permission flag "--dangerously-skip-permissions", which is not the level\'s own (claude-code at full-access: --permission-mode bypassPermissions) [E_PERMISSION_FLAG]\n' +
        "hint: remove it: full-access is the most claude-code enforces\n",
    );
  });

  it("may repeat the level's own flags", async () => {
    sandbox.write("config/config.json", { providers: ["claude-code"], auto_detect: false });
    const run = await sandbox.run(["run", "--", "--permission-mode", "default"]);
    expect(run.code).toBe(0);
    expect(run.stderr.split("\n")[0]).toBe("uuldana: starting claude-code (Claude Code 2.1.332) at ask · ctrl-] opens uuldana's prompt");
  });
});

describe("an entry whose own args carry a permission flag", () => {
  it.each([
    ["gemini", ["--yolo"], "--yolo"],
    ["claude-code", ["--dangerously-skip-permissions"], "--dangerously-skip-permissions"],
    ["codex", ["--yolo"], "--yolo"],
    ["codex", ["-s", "danger-full-access"], "-s"],
    ["qwen", ["--approval-mode=yolo"], "--approval-mode=yolo"],
    ["copilot", ["--yolo"], "--yolo"],
    ["opencode", ["--auto"], "--auto"],
  ])("%s with %j is refused with the reason, in providers list and in run", async (id, args, flag) => {
    sandbox.write("config/config.json", { providers: [{ id, args }], auto_detect: false });
    const reason = `refused: its "args" carry the permission flag "${flag}", which is not its level's own (ask: ${OWN[id]}); remove it, and raise "ceiling" in config.json to let it do more`;
    const list = await sandbox.run(["providers", "list", "--json"]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)[0]).toMatchObject({ entry: id, installed: true, level: null, eligible: false, reasons: [reason] });
    expect(await sandbox.run(["run"])).toEqual({ code: 1, stdout: "", stderr: `uuldana: no entry can run under the ceiling ask [E_NO_ELIGIBLE_ENTRY]\n  ${id}: ${reason}\n` });
  });

  it("is skipped for the next entry, and the journal keeps why", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "gemini", args: ["--yolo"] }, "claude-code"], auto_detect: false });
    const run = await sandbox.run(["run"]);
    expect(run.code).toBe(0);
    expect(run.stderr.split("\n")[0]).toBe("uuldana: starting claude-code (Claude Code 2.1.332) at ask · ctrl-] opens uuldana's prompt");
    const sessions = readdirSync(join(sandbox.data, "sessions"));
    const journal = readFileSync(join(sandbox.data, "sessions", sessions[0]!, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(journal.find((event) => event.type === "skipped")).toMatchObject({
      entry: "gemini",
      reasons: [`refused: its "args" carry the permission flag "--yolo", which is not its level's own (ask: --approval-mode default); remove it, and raise "ceiling" in config.json to let it do more`],
    });
  });

  it("runs when its args only repeat the level's own flags", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "gemini", args: ["--approval-mode", "default"] }], auto_detect: false });
    const list = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout);
    expect(list[0]).toMatchObject({ entry: "gemini", level: "ask", eligible: true, reasons: [] });
  });
});
