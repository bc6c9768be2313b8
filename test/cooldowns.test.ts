import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { readCooldowns, recordRests, updateCooldowns } from "../core/session/cooldowns.js";
import { savePending } from "../core/session/pending-rests.js";
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
    // a rest that waited too long for the other writer is beside the table until the next write
    expect((await updateCooldowns(sandbox.data, () => undefined)).written).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8")).entries)).toHaveLength(80);
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

describe("rests saved beside the table", () => {
  const seen = (at: string, until: string, text = "limit") => ({ until: new Date(until), since: new Date(at), source: "inferred" as const, kind: "weekly", text });
  const table = () => JSON.parse(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8")) as { entries: Record<string, { until: string; text: string }>; clears?: Record<string, string> };

  it("the rest seen later counts, whether it was written or saved; of two seen at once the longer; the next write merges and removes the files", async () => {
    const now = new Date("2026-11-30T12:00:00Z");
    await recordRests(sandbox.data, new Map([["codex", seen("2026-11-30T11:00:00Z", "2026-12-01T00:00:00Z", "written")]]), now);
    // saved by writers that could not take the lock: one seen before the written rest, one after it, one at the same time and longer
    await savePending(sandbox.data, new Map([["codex", seen("2026-11-30T10:00:00Z", "2026-12-05T00:00:00Z", "older")]]), now);
    await savePending(sandbox.data, new Map([["gemini", seen("2026-11-30T11:00:00Z", "2026-12-01T00:00:00Z", "gemini")]]), now);
    await savePending(sandbox.data, new Map([["gemini", seen("2026-11-30T11:00:00Z", "2026-12-02T00:00:00Z", "gemini, longer")]]), now);
    const read = await readCooldowns(sandbox.data);
    expect([...read.entries].map(([key, row]) => `${key}: ${row.text}`).sort()).toEqual(["codex: written", "gemini: gemini, longer"]);
    await savePending(sandbox.data, new Map([["codex", seen("2026-11-30T11:30:00Z", "2026-11-30T18:00:00Z", "newer, shorter")]]), now);
    expect((await readCooldowns(sandbox.data)).entries.get("codex")?.text).toBe("newer, shorter");
    expect(await updateCooldowns(sandbox.data, () => undefined, now)).toEqual({ written: true, notice: undefined });
    expect(Object.fromEntries(Object.entries(table().entries).map(([key, row]) => [key, row.text]))).toEqual({ codex: "newer, shorter", gemini: "gemini, longer" });
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it("a clear is never undone by a rest seen before it, however late it is saved; a rest seen after it counts", async () => {
    const before = new Date(Date.now() - 60_000).toISOString();
    await recordRests(sandbox.data, new Map([["codex", seen(before, "2999-01-01T00:00:00Z")], ["gemini", seen(before, "2999-01-01T00:00:00Z")]]));
    // a uuldana that saw codex's limit before the clear could not take the lock then, and saves it after
    expect(await sandbox.run(["cooldowns", "clear", "codex"])).toEqual({ code: 0, stdout: "Cleared: codex.\n", stderr: "" });
    await savePending(sandbox.data, new Map([["codex", seen(before, "2999-01-01T00:00:00Z")], ["codex@o3", { ...seen(before, "2999-01-01T00:00:00Z"), model: "o3" }]]), new Date());
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["gemini"]);
    expect(await sandbox.run(["cooldowns", "clear"])).toEqual({ code: 0, stdout: "Cleared: gemini.\n", stderr: "" });
    await savePending(sandbox.data, new Map([["gemini", seen(before, "2999-01-01T00:00:00Z")]]), new Date());
    expect(await sandbox.run(["cooldowns"])).toEqual({ code: 0, stdout: "No entry is resting.\n", stderr: "" });
    expect(Object.keys(table().clears ?? {})).toEqual(["*"]);
    // a limit seen after the clear rests the entry again
    await savePending(sandbox.data, new Map([["codex", seen(new Date(Date.now() + 1000).toISOString(), "2999-01-01T00:00:00Z")]]), new Date());
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["codex"]);
  });

  it("a file by the saved-rest name that uuldana did not write is kept aside and said once", async () => {
    const name = "cooldowns.json.pending-0123456789abcdef01234567";
    sandbox.write(`data/${name}`, "{ torn");
    expect((await readCooldowns(sandbox.data)).entries.size).toBe(0);
    const file = join(sandbox.data, name);
    expect(await recordRests(sandbox.data, new Map([["codex", seen("2026-11-30T11:00:00Z", "2999-01-01T00:00:00Z")]]))).toEqual({
      written: true,
      notice: `${file} is not a rest uuldana saved; it was kept as ${file}.bad`,
    });
    expect(readdirSync(sandbox.data).sort()).toEqual(["cooldowns.json", `${name}.bad`]);
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
    expect(json[1]).toEqual({ entry: "codex", account: "codex", until: "2999-01-01T00:00:00.000Z", since: "2026-11-30T12:00:00.000Z", source: "inferred", kind: "weekly", text: "You've hit your usage limit." });
    expect(await sandbox.run(["cooldowns", "clear", "codex"])).toEqual({ code: 0, stdout: "Cleared: codex.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns", "clear", "codex"])).toEqual({ code: 0, stdout: "codex was not resting.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns", "clear"])).toEqual({ code: 0, stdout: "Cleared: claude-work.\n", stderr: "" });
    expect(await sandbox.run(["cooldowns"])).toEqual({ code: 0, stdout: "No entry is resting.\n", stderr: "" });
  });
});
