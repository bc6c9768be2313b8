import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { readCooldowns, updateCooldowns } from "../core/session/cooldowns.js";
import { fixtures, makeSandbox, type Sandbox } from "./helpers.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => sandbox.cleanup());

const row = (until: string, text = "You've hit your weekly limit") => ({ until: new Date(until), since: new Date("2026-11-30T12:00:00Z"), source: "inferred" as const, kind: "weekly", text });

describe("the cooldown table", () => {
  it("keeps every row when two uuldana processes write at once", async () => {
    const writer = (prefix: string) =>
      new Promise<number | null>((resolve) => spawn(process.execPath, [join(fixtures, "write-cooldowns.mjs"), sandbox.data, prefix, "40"], { stdio: "inherit" }).on("exit", resolve));
    expect(await Promise.all([writer("a"), writer("b")])).toEqual([0, 0]);
    const table = await readCooldowns(sandbox.data);
    expect(table.problem).toBeUndefined();
    expect(table.entries.size).toBe(80);
    expect(readdirSync(sandbox.data).sort()).toEqual(["cooldowns.json"]);
  });

  it("is written 0600 in a 0700 folder, and drops rows that have expired", async () => {
    const data = join(sandbox.dir, "fresh-data");
    const now = new Date("2026-11-30T12:00:00Z");
    await updateCooldowns(data, (entries) => {
      entries.set("old", row("2026-11-30T11:00:00Z"));
      entries.set("codex", row("2026-12-01T00:00:00Z"));
    }, now);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, "cooldowns.json")).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(data, "cooldowns.json"), "utf8"))).toEqual({
      version: 1,
      entries: { codex: { until: "2026-12-01T00:00:00.000Z", since: "2026-11-30T12:00:00.000Z", source: "inferred", kind: "weekly", text: "You've hit your weekly limit" } },
    });
  });

  it("keeps an unreadable table aside, reports it, and goes on", async () => {
    sandbox.write("data/cooldowns.json", "{ torn");
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("2999-01-01T00:00:00Z")), new Date("2026-11-30T12:00:00Z"));
    const aside = join(sandbox.data, "cooldowns.json.bad-2026-11-30T12-00-00-000Z");
    expect(write).toEqual({ written: true, notice: `${join(sandbox.data, "cooldowns.json")} is not valid JSON; no entry is treated as resting; it was kept as ${aside}` });
    expect(readFileSync(aside, "utf8")).toBe("{ torn");
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["codex"]);
  });
});

describe("uuldana cooldowns", () => {
  it("lists the resting entries as a table and as JSON, and clears them", async () => {
    await updateCooldowns(sandbox.data, (entries) => {
      entries.set("codex", row("2999-01-01T00:00:00Z", "You've hit your usage limit."));
      entries.set("claude-work", row("2998-06-01T09:30:00Z"));
    });
    const list = await sandbox.run(["cooldowns"]);
    // the LEFT column says how long, far in the future here
    expect(list.stdout.split("\n")[0]).toMatch(/^ENTRY {8}RESTING UNTIL {9}LEFT +SOURCE {4}KIND {4}TEXT$/);
    expect(list.stdout.split("\n")[1]).toMatch(/^claude-work  2998-06-01 09:30 UTC  \d+ days  inferred  weekly  You've hit your weekly limit$/);
    const json = JSON.parse((await sandbox.run(["cooldowns", "list", "--json"])).stdout);
    expect(json.map((r: { entry: string }) => r.entry)).toEqual(["claude-work", "codex"]);
    expect(json[1]).toEqual({ entry: "codex", until: "2999-01-01T00:00:00.000Z", since: "2026-11-30T12:00:00.000Z", source: "inferred", kind: "weekly", text: "You've hit your usage limit." });
    expect(await sandbox.run(["cooldowns", "clear", "codex"])).toEqual({ code: 0, stdout: "Cleared: codex.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns", "clear", "codex"])).toEqual({ code: 0, stdout: "codex was not resting.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns", "clear"])).toEqual({ code: 0, stdout: "Cleared: claude-work.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns"])).toEqual({ code: 0, stdout: "No entry is resting.\n", stderr: "" });
  });
});
