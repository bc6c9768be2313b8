import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { loadConfig } from "../core/config/config.js";
import { makeSandbox, type Sandbox } from "./helpers.js";

describe("handoff_workspace in the config", () => {
  let sandbox: Sandbox;
  beforeEach(() => {
    sandbox = makeSandbox();
  });
  afterEach(() => sandbox.cleanup());
  const load = () => loadConfig({ configDir: sandbox.config, cwd: sandbox.project, env: sandbox.env });

  it("is off unless the user's config.json turns it on", async () => {
    expect((await load()).handoffWorkspace).toBe(false);
    sandbox.write("config/config.json", { handoff_workspace: true });
    expect((await load()).handoffWorkspace).toBe(true);
  });

  it.each([true, false])("a project's config cannot set it (%s): it is reported and ignored", async (value) => {
    sandbox.write("config/config.json", { handoff_workspace: !value });
    const file = sandbox.write("project/.uuldanarc.json", { handoff_workspace: value, ceiling: "read-only" });
    const config = await load();
    expect(config.handoffWorkspace).toBe(!value);
    expect(config.ceiling).toBe("read-only");
    expect(config.notes).toEqual([`${file}: "handoff_workspace" can only be set in your own config.json; ignored`]);
  });

  it("exits 2 for a value that is not true or false, with the key's meaning as the hint", async () => {
    const file = sandbox.write("config/config.json", { handoff_workspace: "yes" });
    const run = await sandbox.run(["providers", "list"]);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        `  at /handoff_workspace (handoff_workspace): must be true or false`,
        `    value: "yes"`,
        `    allowed: true or false`,
        `    hint: Put the git branch, a short status and a summary of the uncommitted changes (never the changes themselves) in the handoff prompt; a project's config cannot set it (default false).`,
        "",
      ].join("\n"),
    });
  });
});
