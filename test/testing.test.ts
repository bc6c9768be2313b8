import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, describe, expect, it } from "vitest";

import { loadProvider, readScreen } from "../core/testing.js";
import { makeSandbox, runFile, standInManifest } from "./helpers.js";

// uuldana/testing, the helper a pack's author tests a manifest and its adapter with: against real files, as the
// author's own tests call it.

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

function pack(id: string, overrides: Record<string, unknown>, adapter?: string): string {
  if (adapter !== undefined) sandbox.write(`pack/${id}.mjs`, adapter);
  return sandbox.write(`pack/${id}.json`, standInManifest(id, { ...overrides, ...(adapter !== undefined ? { adapter: `./${id}.mjs` } : {}) }));
}

describe("loadProvider", () => {
  it("reads text as a session does: the general reader, the manifest's limit_phrases, the adapter's classify", async () => {
    const file = pack(
      "roaster",
      { limit_phrases: ["/out of roasted beans/i"], chrome: ["^roaster v\\d"] },
      `export default {
  classify: (text) => (/^grinder: 0 left$/m.test(text) ? { stop: true, kind: "daily", reason: "its grinder counter is at 0" } : undefined),
  chrome: (line) => line.startsWith("[roaster]"),
};
`,
    );
    const roaster = await loadProvider(file);
    expect(roaster.manifest.id).toBe("roaster");
    expect(roaster.explain("Out of roasted beans until Dec 8, 9am", { now: "2026-12-06T12:00:00Z" })).toMatchObject({
      stop: true,
      reset_at: "2026-12-08T09:01:00.000Z",
      reasons: ['the provider\'s limit phrase matches ("Out of roasted beans")', 'says when it returns ("Dec 8, 9am")', "is a short message"],
    });
    expect(roaster.explain("grinder: 0 left")).toMatchObject({ stop: true, kind: "daily" });
    expect(roaster.explain("grinder: 3 left").stop).toBe(false);
    expect(roaster.chrome(["roaster v2.0", "[roaster] ready", "the answer"])).toEqual(["roaster v2.0", "[roaster] ready"]);
    expect(roaster.problems).toEqual([]);
  });

  it("keeps the line a session would show for a hook it turns off", async () => {
    const roaster = await loadProvider(pack("spiller", {}, 'export default { busy() { throw new Error("spilled"); } };\n'));
    expect(roaster.hooks.busy(["anything"])).toBe(false);
    expect(roaster.problems).toEqual(['uuldana: provider "spiller": its busy hook threw (spilled); uuldana carries on without it']);
  });

  it("throws uuldana's own message for an invalid manifest and for an adapter that will not load", async () => {
    const invalid = sandbox.write("pack/invalid.json", { id: "invalid", name: "Invalid", executables: ["invalid"] });
    await expect(loadProvider(invalid)).rejects.toThrow(
      `uuldana: invalid manifest ${invalid} (1 problem) [E_MANIFEST_INVALID]\n  at /version (version): missing required key "version"\n    hint: How to read the installed version: the arguments to run and the pattern that recognises the output.`,
    );
    const broken = pack("broken", {}, "export default {\n  classify( {\n};\n");
    await expect(loadProvider(broken)).rejects.toThrow(
      `uuldana: the adapter of provider "broken" will not load: a syntax error on line 3 (Unexpected token ';') [E_ADAPTER_LOAD]\n  adapter: ${join(sandbox.dir, "pack", "broken.mjs")}\n  manifest: ${broken}\nhint: fix the adapter, or remove "adapter" from the manifest to run broken without one`,
    );
  });
});

describe("readScreen", () => {
  it("reads a plain text file as its lines", () => {
    const file = sandbox.write("screens/plain.txt", "first line\r\n\r\n  indented\nlast\n");
    expect(readScreen(file)).toEqual(["first line", "", "  indented", "last"]);
  });

  it("reads a report's drawn lines, without the text each candidate read again, of one provider's runs when asked", () => {
    const report = sandbox.write(
      "screens/report.md",
      [
        "# uuldana report: session `abc`",
        "",
        "## Run 1: `roaster`",
        "",
        "- agent: Roaster 1.0.0; provider `roaster`, entry `roaster-work`, at `ask`",
        "",
        "The text it read:",
        "",
        "```text",
        "Out of roasted beans",
        "```",
        "",
        "The lines the agent drew around it: 1 before it, its own line, 0 after it until it was stopped.",
        "",
        "````text",
        "```js",
        "Out of roasted beans",
        "````",
        "",
        "## Run 2: `other`",
        "",
        "- agent: Other 2.0.0; provider `other`, entry `other`, at `ask`",
        "",
        "The last 1 line the agent drew:",
        "",
        "```text",
        "other's line",
        "```",
        "",
      ].join("\n"),
    );
    expect(readScreen(report)).toEqual(["```js", "Out of roasted beans", "other's line"]);
    expect(readScreen(report, { provider: "roaster" })).toEqual(["```js", "Out of roasted beans"]);
    expect(readScreen(report, { provider: "nobody" })).toEqual([]);
  });
});

// A Node started with options that belong to a whole process (Node 24's test runner starts each test file with many
// of them) still runs an adapter in its own thread: only the options that decide how a module loads go with it.
describe("loadProvider in a Node started with whole-process options", () => {
  it("loads the adapter and reads with it", async () => {
    const file = pack("kettle", {}, 'export default { classify: (text) => (text === "kettle: empty" ? { stop: true, kind: "daily", reason: "empty" } : undefined) };\n');
    const testing = join(dirname(dirname(fileURLToPath(import.meta.url))), "dist", "core", "testing.js");
    const script = `const { loadProvider } = await import(${JSON.stringify(testing)});
const kettle = await loadProvider(${JSON.stringify(file)});
console.log(kettle.explain("kettle: empty").stop, kettle.problems.length);`;
    const flags = ["--stack-trace-limit=10", "--v8-pool-size=2", "--secure-heap=0", "--input-type=module", "-e", script];
    expect(await runFile(process.execPath, flags, { cwd: sandbox.dir, env: { PATH: process.env.PATH ?? "" } })).toEqual({ code: 0, stdout: "true 0\n", stderr: "" });
  });
});
