import { existsSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

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

  it("must export a plain object of functions, or the error names both files and the fix", async () => {
    const adapterFile = sandbox.write("packs/bad.mjs", `export default { describe: "not a function" };`);
    const file = sandbox.write("packs/bad.json", standInManifest("bad", { adapter: "./bad.mjs" }));
    const record = await loadManifestFile(file, "drop-in");
    await expect(loadAdapter(record)).rejects.toMatchObject({
      code: "E_MANIFEST_INVALID",
      message: 'the adapter of provider "bad" exports "describe", which is not a function',
      details: [`  adapter: ${adapterFile}`, `  manifest: ${file}`],
      hint: "an adapter's default export is a plain object whose values are functions (use defineProvider)",
    });
  });
});
