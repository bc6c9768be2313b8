import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { makeSandbox, npmEnv, root, runBin, runFile, type Run } from "./helpers.js";

// What a user does: pack the project, install the tarball with npm install -g (into a scratch prefix), and run the
// bin npm put on PATH. npm outside this project does not read its allowScripts, and node-pty has no prebuilt binary
// for Linux, so whether the install compiled node-pty depends on the npm at hand; either way, run must say what to do.
// Only Linux: elsewhere node-pty ships prebuilt binaries and the messages below differ.
// what run says on a machine with no agent CLI and no config
const NO_PROVIDER =
  'uuldana: no entry can run: no provider is listed in config.json and none is installed [E_NO_ELIGIBLE_ENTRY]\nhint: install an agent CLI, or list one in config.json; "uuldana providers list --all" shows every known provider\n';

describe.skipIf(process.platform !== "linux")("uuldana installed from its packed tarball with npm install -g", () => {
  const work = mkdtempSync(join(tmpdir(), "uuldana-install-"));
  const prefix = join(work, "prefix");
  const installed = join(prefix, "lib", "node_modules", "uuldana");
  const nodePty = join(installed, "node_modules", "node-pty");
  const sandbox = makeSandbox();
  // a PATH with the installed bin and node, and no agent
  const nodeOnly = join(work, "node-only");
  const env = { ...sandbox.env, PATH: `${join(prefix, "bin")}:${nodeOnly}` };
  const uuldana = (args: string[]): Promise<Run> => runFile(join(prefix, "bin", "uuldana"), args, { cwd: sandbox.project, env });
  const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;
  let builtByInstall = false;

  beforeAll(async () => {
    mkdirSync(nodeOnly);
    symlinkSync(process.execPath, join(nodeOnly, "node"));
    // the globalSetup has just built dist/: packing without scripts does not rebuild it under the other tests' feet
    const pack = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", work], root);
    const tarball = join(work, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);
    await npm(["install", "--global", "--prefix", prefix, tarball], work);
    builtByInstall = existsSync(join(nodePty, "build", "Release", "pty.node"));
  }, 600_000);

  afterAll(() => {
    sandbox.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it("prints its version", async () => {
    expect(await uuldana(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("lists every built-in provider as not installed, as the source tree does", async () => {
    const run = await uuldana(["providers", "list", "--all"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout.endsWith("\nCeiling ask: no entry can run now.\n")).toBe(true);
    for (const file of readdirSync(join(root, "manifests"))) {
      const id = file.replace(/\.json$/, "");
      // not installed, then any other reason (Antigravity CLI's manifest names no level, so it is also refused)
      expect(run.stdout).toMatch(new RegExp(`^\\d+ +${id} .* not installed: no \\S+ .*on PATH(?:; .*)?$`, "m"));
    }
    expect(run.stdout).toBe((await runBin(["providers", "list", "--all"], { cwd: sandbox.project, env })).stdout);
  });

  it("ships the API packs use: uuldana's types and helpers, and uuldana/testing", async () => {
    // a module beside the installed package's node_modules, as a pack's test imports it
    const script = join(prefix, "lib", "pack-api.mjs");
    writeFileSync(
      script,
      'const api = await import("uuldana"); const testing = await import("uuldana/testing");\n' +
        "console.log(typeof api.defineProvider, api.PROVIDER_API, typeof testing.loadProvider, typeof testing.readScreen);\n",
    );
    expect(await runFile(process.execPath, [script], { cwd: work, env })).toEqual({ code: 0, stdout: "function 1 function function\n", stderr: "" });
    expect(existsSync(join(installed, "dist", "core", "testing.d.ts"))).toBe(true);
    // the example pack is this repository's, not the package's
    expect(existsSync(join(installed, "examples", "uuldana-provider-example"))).toBe(false);
  });

  it("ships every file the installed README and its docs link to", () => {
    const pages = ["README.md", ...readdirSync(join(installed, "docs")).map((file) => `docs/${file}`)];
    expect(pages).toContain("docs/README.md");
    for (const page of pages) {
      const text = readFileSync(join(installed, page), "utf8").replace(/^ *```[\s\S]*?^ *```$/gm, "");
      for (const [, link] of text.matchAll(/\]\(([^)\s#]+)[^)\s]*\)/g)) {
        if (/^[a-z]+:/i.test(link!)) continue;
        expect(existsSync(join(installed, dirname(page), link!)), `${page}: ${link}`).toBe(true);
      }
    }
  });

  it("gets past loading node-pty in run when the install compiled it, and says so when it did not", async () => {
    const run = await uuldana(["run"]);
    if (builtByInstall) expect(run).toEqual({ code: 1, stdout: "", stderr: NO_PROVIDER });
    else expect(run.stderr.split("\n")[0]).toBe("uuldana: the terminal module node-pty could not be loaded, so no agent can run [E_PTY_UNAVAILABLE]");
  });

  it("says what is missing and how to build it when node-pty was not compiled, for run and resume alike", async () => {
    rmSync(join(nodePty, "build"), { recursive: true, force: true });
    rmSync(sandbox.data, { recursive: true, force: true });
    const stderr =
      "uuldana: the terminal module node-pty could not be loaded, so no agent can run [E_PTY_UNAVAILABLE]\n" +
      `  node-pty was never compiled: ${nodePty}/build/Release/pty.node is missing, and it ships no prebuilt binary for linux-${process.arch}\n` +
      "  npm compiles it while installing uuldana, unless install scripts are skipped or python3, make or a C++ compiler is missing\n" +
      `hint: with python3, make and a C++ compiler (g++) installed, run: cd "${installed}" && npm rebuild node-pty\n`;
    expect(await uuldana(["run"])).toEqual({ code: 2, stdout: "", stderr });
    expect(await uuldana(["resume"])).toEqual({ code: 2, stdout: "", stderr });
    // nothing was started: no session journal
    expect(existsSync(join(sandbox.data, "sessions"))).toBe(false);
    // commands that run no agent still work
    expect((await uuldana(["providers", "list", "--all"])).code).toBe(0);
  });

  it("runs again after the command the hint gives", async () => {
    const run = await uuldana(["run"]);
    const command = /^hint: .*, run: (.*)$/m.exec(run.stderr)?.[1];
    expect(command).toBe(`cd "${installed}" && npm rebuild node-pty`);
    const rebuild = await runFile("sh", ["-c", command!], { cwd: work, env: npmEnv() });
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(existsSync(join(nodePty, "build", "Release", "pty.node"))).toBe(true);
    expect(await uuldana(["run"])).toEqual({ code: 1, stdout: "", stderr: NO_PROVIDER });
  }, 180_000);

  it("plays the demo from the installed package", async () => {
    const run = await uuldana(["demo"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("That was a failover. Run uuldana run in a project to start your own agents.\n");
  }, 60_000);

  it("says to install again when node-pty is missing altogether", async () => {
    renameSync(nodePty, `${nodePty}-away`);
    try {
      expect(await uuldana(["run"])).toEqual({
        code: 2,
        stdout: "",
        stderr:
          "uuldana: the terminal module node-pty could not be loaded, so no agent can run [E_PTY_UNAVAILABLE]\n" +
          "  Cannot find module 'node-pty/package.json'\n" +
          "hint: node-pty is one of uuldana's dependencies: install uuldana again the way you installed it\n",
      });
    } finally {
      renameSync(`${nodePty}-away`, nodePty);
    }
  });
});

// The Quick start's route from a clone: npm link in it (after npm ci, which the clone's node_modules stands for) puts
// uuldana on PATH, through npm's global prefix (here a scratch one, npm_config_prefix). The clone is the project's
// files without dist: npm link builds it, through prepare.
describe.skipIf(process.platform !== "linux")("uuldana linked from a clone with npm link", () => {
  const work = mkdtempSync(join(tmpdir(), "uuldana-link-"));
  const clone = join(work, "clone");
  const prefix = join(work, "prefix");
  const sandbox = makeSandbox();
  let builtMode = 0;

  beforeAll(async () => {
    await copyProject(clone);
    // the dependencies npm ci installed, read only: npm link adds nothing to them
    symlinkSync(join(root, "node_modules"), join(clone, "node_modules"));
    // npm install builds the clone (prepare) before npm link links it; npm may link it without marking the bin runnable
    await npm(["run", "build"], clone);
    builtMode = statSync(join(clone, "dist", "core", "cli", "main.js")).mode & 0o777;
    await npm(["link"], clone, { npm_config_prefix: prefix });
  }, 600_000);

  afterAll(() => {
    sandbox.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it("builds a bin that runs before anything links it", () => {
    expect(builtMode.toString(8)).toBe("755");
  });

  it("leaves uuldana on PATH, working", async () => {
    const env = { ...sandbox.env, PATH: `${join(prefix, "bin")}:${sandbox.env.PATH}` };
    expect(await runFile("uuldana", ["--version"], { cwd: sandbox.project, env })).toEqual({ code: 0, stdout: "0.1.0\n", stderr: "" });
    expect(realpathSync(join(prefix, "bin", "uuldana"))).toBe(join(realpathSync(clone), "dist", "core", "cli", "main.js"));
  });
});

// The project's files as git sees them (tracked, or new and not ignored). A copy that is no git work tree (CI tests
// other Node releases in one) is copied whole, less what the build and npm ci made.
async function copyProject(to: string): Promise<void> {
  const listed = await runFile("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, env: npmEnv() });
  if (listed.code !== 0) {
    cpSync(root, to, { recursive: true, filter: (source) => !["node_modules", "dist", ".git"].includes(relative(root, source).split(sep)[0]!) });
    return;
  }
  for (const file of listed.stdout.split("\0").filter((name) => name && name !== "node_modules" && existsSync(join(root, name)))) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(root, file), join(to, file));
  }
}

async function npm(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const run = await runFile("npm", args, { cwd, env: { ...npmEnv(), ...env } });
  if (run.code !== 0) throw new Error(`npm ${args.join(" ")} exited with ${run.code}:\n${run.stderr}`);
  return run;
}
