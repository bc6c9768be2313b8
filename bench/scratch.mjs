// A throwaway uuldana home in the temp folder: its own config, data and cache, and a bin folder first on PATH
// for the stand-in agents, so a benchmark never reads or writes the user's own setup.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

export function scratch(label) {
  const dir = mkdtempSync(join(tmpdir(), `uuldana-bench-${label}-`));
  const bin = join(dir, "bin");
  const config = join(dir, "config");
  mkdirSync(bin);
  mkdirSync(join(config, "providers"), { recursive: true });
  const env = {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH}`,
    UULDANA_CONFIG_DIR: config,
    UULDANA_DATA_DIR: join(dir, "data"),
    UULDANA_CACHE_DIR: join(dir, "cache"),
  };
  return {
    dir,
    env,
    // an executable in bin, returned by its full path
    tool(name, text) {
      const file = join(bin, name);
      writeFileSync(file, text);
      chmodSync(file, 0o755);
      return file;
    },
    link(name, target) {
      symlinkSync(target, join(bin, name));
    },
    // a provider manifest whose version probe expects "<id> <version>" unless told otherwise
    provider(id, fields = {}) {
      const manifest = { id, name: id, executables: [id], version: { args: ["--version"], pattern: `^${id} (\\S+)` }, levels: { ask: {} }, ...fields };
      writeFileSync(join(config, "providers", `${id}.json`), JSON.stringify(manifest));
    },
    config(fields) {
      writeFileSync(join(config, "config.json"), JSON.stringify({ auto_detect: false, ...fields }));
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
