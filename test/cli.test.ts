import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { bin, fixtures, makeSandbox, root, runBin, standInManifest } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

const forbidNative = join(fixtures, "forbid-native.mjs");
const usage = 'hint: run "uuldana --help" for usage\n';

describe("the uuldana bin under plain node", () => {
  it("prints its version, equal to package.json's", async () => {
    const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
    expect(await sandbox.run(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("prints help with the commands and where its files live", async () => {
    const run = await sandbox.run(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").slice(0, 3)).toEqual(["Usage: uuldana [options] [command]", "", "Run AI coding agents in your terminal; when one's usage allowance is gone,"]);
    expect(run.stdout).toContain("  run [options] [agent-args...]  run the first available entry of the priority");
    expect(run.stdout).toContain("  providers                      the agents uuldana knows, their order and");
    expect(run.stdout.endsWith(`Files:\n  config  ${sandbox.config}/config.json, ${sandbox.config}/providers/*.json\n  packs   ${sandbox.config}/node_modules\n  data    ${sandbox.data}\n  cache   ${sandbox.cache}\n`)).toBe(true);
  });

  it("exits 2 with the help on stderr when no command is given", async () => {
    const run = await sandbox.run([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.split("\n")[0]).toBe("Usage: uuldana [options] [command]");
  });

  it.each([
    [["bogus"], `uuldana: unknown command 'bogus' [E_USAGE]\n${usage}`],
    [["providers", "list", "--jsn"], "uuldana: unknown option '--jsn' [E_USAGE]\nhint: did you mean --json?\n"],
    [
      ["providers", "list", "--ceiling", "yolo"],
      `uuldana: option '--ceiling <level>' argument 'yolo' is invalid. Allowed choices are read-only, ask, auto-edit, full-access. [E_USAGE]\n${usage}`,
    ],
    [["providers", "validate"], `uuldana: missing required argument 'paths' [E_USAGE]\n${usage}`],
  ])("exits 2 for the usage error %j", async (args, stderr) => {
    expect(await sandbox.run(args)).toEqual({ code: 2, stdout: "", stderr });
  });

  it("never loads node-pty or @xterm/headless for commands that run no agent", async () => {
    // the guard itself works: importing node-pty under it fails
    const control = spawnSync(process.execPath, ["--import", forbidNative, "--input-type=module", "-e", "await import('node-pty')"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(control.status).not.toBe(0);
    expect(control.stderr).toContain("forbidden import: node-pty");
    for (const args of [["--help"], ["--version"], ["providers", "list"], ["providers", "list", "--json", "--all"], ["providers", "validate", join(root, "manifests")]]) {
      const run = spawnSync(process.execPath, ["--import", forbidNative, bin, ...args], {
        cwd: sandbox.project,
        env: sandbox.env,
        encoding: "utf8",
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
    }
  });

  it("never cuts off output to a slow pipe, even past 64 KB", async () => {
    const many = Array.from({ length: 300 }, (_, i) => `pad-${String(i).padStart(3, "0")}`);
    for (const id of many) sandbox.write(`config/providers/${id}.json`, standInManifest(id));
    const shell = spawnSync("sh", ["-c", `"${process.execPath}" "${bin}" providers list --json --all | (sleep 1; cat)`], {
      cwd: sandbox.project,
      env: sandbox.env,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(shell.stdout.length).toBeGreaterThan(64 * 1024);
    const rows = JSON.parse(shell.stdout) as { entry: string }[];
    expect(rows.filter((row) => row.entry.startsWith("pad-")).map((row) => row.entry)).toEqual(many);
    const direct = await runBin(["providers", "list", "--json", "--all"], { cwd: sandbox.project, env: sandbox.env });
    expect(direct.stdout).toBe(shell.stdout);
  });
});
