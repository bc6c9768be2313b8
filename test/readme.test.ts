import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { LEVELS } from "../core/config/levels.js";
import { renderReference, replaceReference } from "../core/config/reference.js";
import type { Manifest } from "../core/registry/types.js";
import { linkAgent, makeSandbox, root, signInBuiltIns, type Sandbox } from "./helpers.js";

const readme = readFileSync(join(root, "README.md"), "utf8");
const doc = (name: string): string => readFileSync(join(root, "docs", name), "utf8");
// The README, the pages of docs/ and CONTRIBUTING.md: what a user or a contributor reads.
const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((file) => file.endsWith(".md")).map((file) => join("docs", file)), "CONTRIBUTING.md"]
  .map((file) => ({ file, text: readFileSync(join(root, file), "utf8") }));

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.cleanup());

// The sh blocks of a page (indented ones too): each command, and the output shown under it when lines start with "$ ".
function shownCommands(text: string): { command: string; output: string | undefined }[] {
  const found: { command: string; output: string | undefined }[] = [];
  for (const match of text.matchAll(/^( *)```sh\n([\s\S]*?)^ *```$/gm)) {
    const lines = match[2]!.split("\n").map((line) => line.slice(match[1]!.length)).filter((line, i, all) => i < all.length - 1 || line);
    if (!lines.some((line) => line.startsWith("$ "))) {
      for (const line of lines) if (line.trim()) found.push({ command: line.trim(), output: undefined });
      continue;
    }
    for (const [i, line] of lines.entries()) {
      if (!line.startsWith("$ ")) continue;
      const next = lines.findIndex((other, j) => j > i && other.startsWith("$ "));
      found.push({ command: line.slice(2), output: lines.slice(i + 1, next === -1 ? undefined : next).join("\n") });
    }
  }
  return found;
}

// Every source file under a folder of the repository, by its path from the root.
function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => `${folder}/${file}`);
}

// Words of a command line as a shell would split them (double quotes only; nothing is ever run through a shell).
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

describe("the README and docs/", () => {
  it("shows each built-in provider's flags per level exactly as the manifests have them (docs/sessions.md)", () => {
    const manifests = readdirSync(join(root, "manifests"))
      .sort()
      .map((file) => JSON.parse(readFileSync(join(root, "manifests", file), "utf8")) as Manifest);
    const cell = (flags: { args?: string[]; env?: Record<string, string> } | undefined): string => {
      if (!flags) return "refused";
      const env = Object.keys(flags.env ?? {}).map((name) => `${name}=…`);
      return `\`${[...(flags.args ?? []), ...env].join(" ")}\``;
    };
    const table = [
      `| provider | ${LEVELS.join(" | ")} |`,
      `|${" --- |".repeat(LEVELS.length + 1)}`,
      ...manifests.map((m) => `| ${m.id} | ${LEVELS.map((level) => cell(m.levels?.[level])).join(" | ")} |`),
    ].join("\n");
    expect(doc("sessions.md")).toContain(table);
  });

  it("lists every source file in its project structure (docs/project-structure.md), and only paths that exist", () => {
    const structure = /^# Project structure\n[\s\S]*?\n```\n([\s\S]*?)```/.exec(doc("project-structure.md"))![1]!;
    for (const file of [...sourceFiles("core"), ...sourceFiles("providers")]) expect(structure).toContain(`${file} `);
    const paths = structure.split("\n").map((line) => line.split(" ")[0]!).filter(Boolean);
    expect(paths.length).toBeGreaterThan(40);
    for (const path of paths) expect(existsSync(join(root, path)), path).toBe(true);
  });

  it("keeps the Quick start to the two commands CI runs", () => {
    const quick = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quick).toBe("npm install && npm link && uuldana demo\nnpm test\n");
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    expect(ci).toContain("step install bash -c 'npm install && npm link && uuldana demo'");
    // and then finds uuldana on PATH
    expect(ci).toContain("step path bash -c 'command -v uuldana && uuldana --version'");
    expect(ci).toContain("step test npm test");
  });

  it("carries the config and manifest reference exactly as the schemas describe them (docs/reference.md)", () => {
    const schema = (name: string): object => JSON.parse(readFileSync(join(root, "schemas", `${name}.schema.json`), "utf8")) as object;
    const page = doc("reference.md");
    const current = replaceReference(page, renderReference(schema("config"), schema("manifest")));
    // when this fails: npm run reference
    expect(page).toBe(current);
  });

  it("shows only commands a test runs, and their output as it is", async () => {
    const commands = pages.flatMap((page) => shownCommands(page.text));
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    // npm commands run elsewhere: by CI on a clean clone, or by the test named here
    const runBy: Record<string, () => boolean> = {
      "npm install && npm link && uuldana demo": () => ci.includes("step install bash -c 'npm install && npm link && uuldana demo'"),
      // the tests' global setup takes the same steps
      "npm run build": () => scripts.build === "tsc -p tsconfig.json && node dist/core/base/schema-build.js && node dist/core/base/bin-build.js" && readFileSync(join(root, "test", "build.ts"), "utf8").includes("bin-build.js"),
      // the script writes what the reference test above renders
      "npm run reference": () => scripts.reference === "tsc -p tsconfig.json && node dist/core/config/reference-build.js",
      "npm test": () => ci.includes("step test npm test"),
      "npm run test:real": () => ci.includes("step real npm run test:real"),
      "npm run bench": () => ci.includes("step bench npm run bench"),
      "npm install -g uuldana": () => readFileSync(join(root, "test", "install.test.ts"), "utf8").includes('"install", "--global"'),
    };
    sandbox = makeSandbox();
    linkAgent(sandbox, "claude", "real-version.sh");
    linkAgent(sandbox, "codex", "real-version.sh");
    const config = /## Order and permissions[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)![1]!;
    sandbox.write("config/config.json", config);
    // the config's agents are signed in, each account in its own folder, as a reader's would be after the first-run steps
    signInBuiltIns(sandbox);
    const accounts = (JSON.parse(config) as { providers?: unknown[] }).providers ?? [];
    for (const entry of accounts) {
      const folders = Object.values((entry as { env?: Record<string, string> }).env ?? {}).filter((value) => value.startsWith("~/"));
      for (const folder of folders) for (const file of [".credentials.json", "auth.json"]) sandbox.write(`${folder.slice(2)}/${file}`, "{}");
    }
    let ran = 0;
    for (const { command, output } of commands) {
      if (command.startsWith("npm ")) {
        expect(runBy[command]?.() ?? false, `no test runs "${command}"`).toBe(true);
        continue;
      }
      const [program, ...args] = words(command);
      expect(program, command).toBe("uuldana");
      const run = await sandbox.run(args, { env: { TZ: "UTC" } });
      expect(run.code, `${command}\n${run.stderr}`).toBe(0);
      if (output !== undefined) expect(run.stdout.trimEnd(), command).toBe(output);
      ran++;
    }
    expect(ran).toBeGreaterThanOrEqual(2);
    // the README's own blocks are among them
    expect(shownCommands(readme).filter(({ command }) => command.startsWith("uuldana ")).length).toBeGreaterThanOrEqual(1);
  });

  it("names in its text only commands some test runs", () => {
    // every test but this one, which names the commands it looks for
    const tests = [...readdirSync(join(root, "test")).filter((file) => file.endsWith(".ts") && file !== "readme.test.ts").map((file) => join("test", file)), ...readdirSync(join(root, "test", "real")).map((file) => join("test", "real", file))]
      .map((file) => readFileSync(join(root, file), "utf8"))
      .join("\n");
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    // npm commands, and where each is run: CI on a clean clone, or the test that does what the command does
    const npmRunBy: Record<string, boolean> = {
      "npm install && npm link && uuldana demo": ci.includes("npm install && npm link && uuldana demo"),
      "npm install": ci.includes("npm install && npm link"),
      "npm link": ci.includes("npm install && npm link"),
      "npm test": ci.includes("step test npm test"),
      // test/run.mjs hands its arguments to vitest
      "npm test -- test/readme.test.ts": readFileSync(join(root, "test", "run.mjs"), "utf8").includes("...process.argv.slice(2)"),
      // the tests' global setup takes the same steps
      "npm run build": ["schema-build.js", "bin-build.js"].every((step) => readFileSync(join(root, "test", "build.ts"), "utf8").includes(step)),
      "npm run demo": scripts.demo === "node dist/core/cli/main.js demo" && tests.includes('run(["demo"])'),
      // the script writes what the reference test above renders
      "npm run reference": scripts.reference === "tsc -p tsconfig.json && node dist/core/config/reference-build.js",
      "npm run test:real": ci.includes("step real npm run test:real"),
      "npm install -g": tests.includes('"install", "--global"'),
      "npm install -g .": tests.includes('"install", "--global"'),
      "npm install -g uuldana": tests.includes('"install", "--global"'),
      // uuldana providers add runs it, and the packs test runs providers add; the install test and the packs test pack
      "npm install --prefix <config dir>": tests.includes('"providers", "add"') && readFileSync(join(root, "core", "registry", "npm.ts"), "utf8").includes('"--prefix"'),
      "npm pack": tests.includes('"pack", "--ignore-scripts"'),
      // the docs test lists what the package ships with it
      "npm pack --dry-run": tests.includes('"pack", "--dry-run"'),
      "npm run bench": ci.includes("step bench npm run bench"),
    };
    const named = pages.flatMap((page) => [...page.text.matchAll(/`((?:uuldana|npm) [^`·]*)`/g)]).map((m) => m[1]!.replace(/\s+/g, " "));
    expect(named.length).toBeGreaterThan(10);
    for (const command of new Set(named)) {
      if (command.startsWith("npm ")) {
        expect(npmRunBy[command], `no test runs "${command}"`).toBe(true);
        continue;
      }
      // the words before the first placeholder, as a test writes them in an argv array
      const argv = command.split(" ").slice(1).filter((word, i, all) => !all.slice(0, i + 1).some((w) => /^[A-Z]+$|^</.test(w)));
      expect(tests, `no test runs "${command}"`).toContain(`[${argv.map((word) => JSON.stringify(word)).join(", ")}`);
    }
  });
});

