import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { formatError, UuldanaError } from "../core/base/errors.js";
import { loadAdapter } from "../core/registry/adapter.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { makeSandbox, standInManifest } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

const HOOKS_HINT =
  "hint: an adapter's default export is an object of hooks, export default defineProvider({ ... }); each hook is optional and a function: classify, chrome, busy, conversation, ready, transcript, launchSettings, quotaFiles and quota\n";

// A drop-in manifest with its adapter beside it, loaded as the registry loads it.
async function dropIn(id: string, adapter: string): Promise<{ manifest: string; adapter: string; record: Awaited<ReturnType<typeof loadManifestFile>> }> {
  const adapterFile = sandbox.write(`packs/${id}.mjs`, adapter);
  const manifest = sandbox.write(`packs/${id}.json`, standInManifest(id, { adapter: `./${id}.mjs` }));
  const record = await loadManifestFile(manifest, "drop-in");
  expect(record.error).toBeUndefined();
  return { manifest, adapter: adapterFile, record };
}

// What loading an adapter prints when it fails, as the CLI prints every error.
async function failure(record: Awaited<ReturnType<typeof loadManifestFile>>): Promise<{ code: string; text: string }> {
  const error = await loadAdapter(record).then(
    () => undefined,
    (problem: unknown) => problem,
  );
  expect(error).toBeInstanceOf(UuldanaError);
  return { code: (error as UuldanaError).code, text: formatError(error as UuldanaError) };
}

describe("adapters", () => {
  it("are imported only when asked for, and give their hooks", async () => {
    const marker = join(sandbox.dir, "imported");
    const { record } = await dropIn(
      "alpha",
      `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "x"); export default { classify: (text) => ({ stop: text === "gone" }) };`,
    );
    expect(existsSync(marker)).toBe(false);
    const adapter = await loadAdapter(record);
    expect(existsSync(marker)).toBe(true);
    expect(adapter!.classify!("gone")).toEqual({ stop: true });
  });

  it("are absent for a manifest without one", async () => {
    const file = sandbox.write("packs/plain.json", standInManifest("plain"));
    expect(await loadAdapter(await loadManifestFile(file, "drop-in"))).toBeUndefined();
  });

  it("that will not load for a syntax error are E_ADAPTER_LOAD, naming the line, the provider and both files", async () => {
    const { record, adapter, manifest } = await dropIn("syntax", "export default {\n  busy(screen) {\n    return screen ===;\n  },\n};\n");
    expect(await failure(record)).toEqual({
      code: "E_ADAPTER_LOAD",
      text:
        `uuldana: the adapter of provider "syntax" will not load: a syntax error on line 3 (Unexpected token ';') [E_ADAPTER_LOAD]\n` +
        `  adapter: ${adapter}\n  manifest: ${manifest}\n` +
        `hint: fix the adapter, or remove "adapter" from the manifest to run syntax without one\n`,
    });
  });

  it("whose top level throws, or that is gone by the time it runs, are E_ADAPTER_LOAD too", async () => {
    const thrower = await dropIn("thrower", `throw new Error("no config for thrower");\n`);
    expect((await failure(thrower.record)).text.split("\n")[0]).toBe(
      'uuldana: the adapter of provider "thrower" will not load: loading it threw an error (no config for thrower) [E_ADAPTER_LOAD]',
    );
    const gone = await dropIn("gone", "export default {};\n");
    rmSync(gone.adapter);
    expect(await failure(gone.record)).toEqual({
      code: "E_ADAPTER_LOAD",
      text:
        `uuldana: the adapter of provider "gone" will not load: the file does not exist [E_ADAPTER_LOAD]\n` +
        `  adapter: ${gone.adapter}\n  manifest: ${gone.manifest}\n` +
        `hint: fix the adapter, or remove "adapter" from the manifest to run gone without one\n`,
    });
  });

  it.each([
    ["unknown-name", `export default { describe: () => "alpha" };`, 'exports "describe", which is not a hook'],
    ["not-function", `export default { busy: "esc to interrupt" };`, 'exports "busy" as a string, not a function'],
    ["object-hook", `export default { chrome: { line: true } };`, 'exports "chrome" as an object, not a function'],
    ["function-default", `export default function classify() {}`, "has a function as its default export, not a plain object"],
    ["class-default", `class Hooks { busy() { return false; } }\nexport default new Hooks();`, "has an instance of Hooks as its default export, not a plain object"],
    ["array-default", `export default [];`, "has an array as its default export, not a plain object"],
    ["named-only", `export function busy() { return false; }`, "has no default export"],
  ])("whose export is not an object of hooks (%s) are E_ADAPTER_INVALID, with the hook names in the hint", async (id, source, problem) => {
    const { record, adapter, manifest } = await dropIn(id, source);
    expect(await failure(record)).toEqual({
      code: "E_ADAPTER_INVALID",
      text: `uuldana: the adapter of provider "${id}" ${problem} [E_ADAPTER_INVALID]\n  adapter: ${adapter}\n  manifest: ${manifest}\n${HOOKS_HINT}`,
    });
  });

  it("of built-in providers are named ../dist/providers/<id>.js from manifests/ and load from there", async () => {
    const manifest = sandbox.write("package/manifests/omega.json", standInManifest("omega", { adapter: "../dist/providers/omega.js" }));
    const missing = await loadManifestFile(manifest, "built-in");
    expect(formatError(missing.error!)).toBe(
      `uuldana: invalid manifest ${manifest} (1 problem) [E_MANIFEST_INVALID]\n` +
        `  at /adapter (adapter): names a file that does not exist (${join(sandbox.dir, "package", "dist", "providers", "omega.js")})\n` +
        `    value: "../dist/providers/omega.js"\n` +
        `    allowed: a path relative to the manifest of an existing .js or .mjs file\n` +
        `    hint: Path of an optional JavaScript module, relative to this manifest, whose default export is the provider's hooks: for a drop-in a .mjs or .js file beside it ("./<id>.mjs"), for a built-in the one compiled from providers/<id>.ts ("../dist/providers/<id>.js"); it is imported only when the provider runs.\n`,
    );
    sandbox.write("package/package.json", { type: "module" });
    sandbox.write("package/dist/providers/omega.js", `export default { chrome: (line) => line.startsWith("omega>") };\n`);
    const record = await loadManifestFile(manifest, "built-in");
    expect(record.error).toBeUndefined();
    const adapter = await loadAdapter(record);
    expect([adapter!.chrome!("omega> hi"), adapter!.chrome!("hi")]).toEqual([true, false]);
  });

  it("are never imported to list or validate providers", async () => {
    const marker = join(sandbox.dir, "listed-imported");
    sandbox.write(
      "config/providers/sigma.mjs",
      `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "x"); throw new Error("imported");\n`,
    );
    const manifest = sandbox.write("config/providers/sigma.json", standInManifest("sigma", { adapter: "./sigma.mjs" }));
    sandbox.write("config/config.json", { providers: ["sigma"], auto_detect: false });
    const list = await sandbox.run(["providers", "list", "--json"]);
    expect([list.code, list.stderr]).toEqual([0, ""]);
    expect((JSON.parse(list.stdout) as { provider: string }[]).map((row) => row.provider)).toEqual(["sigma"]);
    const validate = await sandbox.run(["providers", "validate", join(sandbox.config, "providers")]);
    expect(validate).toEqual({ code: 0, stdout: `valid: ${manifest} (sigma)\n`, stderr: "" });
    expect(existsSync(marker)).toBe(false);
  });
});
