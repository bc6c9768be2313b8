import { existsSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { UuldanaError, formatError } from "../core/base/errors.js";
import { loadAdapter } from "../core/registry/adapter.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { makeSandbox, standInManifest } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

describe("adapters", () => {
  it("are imported only when asked for, and give their hooks", async () => {
    const marker = join(sandbox.dir, "imported");
    sandbox.write(
      "packs/alpha.mjs",
      `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "x"); export default { describe: () => "alpha hooks" };`,
    );
    const file = sandbox.write("packs/alpha.json", standInManifest("alpha", { adapter: "./alpha.mjs" }));
    const record = await loadManifestFile(file, "drop-in");
    expect(record.error).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
    const adapter = await loadAdapter(record);
    expect(existsSync(marker)).toBe(true);
    expect((adapter!.describe as () => string)()).toBe("alpha hooks");
  });

  it("are absent for a manifest without one", async () => {
    const file = sandbox.write("packs/plain.json", standInManifest("plain"));
    expect(await loadAdapter(await loadManifestFile(file, "drop-in"))).toBeUndefined();
  });

  it("that cannot be imported fail with their own code, naming both files, with what the import said as the cause", async () => {
    // a module that throws while it is evaluated; its error's own cause is shown too
    const adapterFile = sandbox.write("packs/broken.mjs", 'throw new Error("the adapter could not read its table", { cause: new Error("ENOENT: table.json") });\n');
    const file = sandbox.write("packs/broken.json", standInManifest("broken", { adapter: "./broken.mjs" }));
    const error = await loadAdapter(await loadManifestFile(file, "drop-in")).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(UuldanaError);
    expect(formatError(error)).toBe(
      [
        'uuldana: the adapter of provider "broken" could not be loaded [E_ADAPTER_UNLOADABLE]',
        `  adapter: ${adapterFile}`,
        `  manifest: ${file}`,
        'hint: fix what the cause says in the adapter file, or remove "adapter" from the manifest',
        "cause: the adapter could not read its table",
        "cause: ENOENT: table.json",
        "",
      ].join("\n"),
    );
  });

  it("must export a plain object of functions, or the error names both files and the fix", async () => {
    const adapterFile = sandbox.write("packs/bad.mjs", `export default { describe: "not a function" };`);
    const file = sandbox.write("packs/bad.json", standInManifest("bad", { adapter: "./bad.mjs" }));
    const record = await loadManifestFile(file, "drop-in");
    await expect(loadAdapter(record)).rejects.toMatchObject({
      code: "E_ADAPTER_INVALID",
      message: 'the adapter of provider "bad" exports "describe", which is not a function',
      details: [`  adapter: ${adapterFile}`, `  manifest: ${file}`],
      hint: "an adapter's default export is a plain object whose values are functions (use defineProvider)",
    });
  });
});
