import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterEach, beforeAll, describe, expect, it } from "vitest";

import type { NativeQuota, QuotaQuery } from "../core/index.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { openProvider, type HookProblem, type ProviderHooks } from "../core/registry/provider.js";
import { cpuMs, fixtures, root } from "./helpers.js";

// Codex CLI's quota hooks, through the built-in manifest and its compiled adapter, on account folders laid out as the
// real Codex 0.171.0 lays them out, with the rollout files it wrote against a server sending the API's rate-limit
// headers (test/fixtures/quota/codex/README.md).

// an answer with the 5-hour window at 37.5% and the weekly one at 61%, then the usage limit, the 5-hour window full
const LIMIT = "rollout-2026-12-02T01-57-09-01a23478-4f36-7aa0-a893-029d536477f7.jsonl";
const LIMIT_ID = "01a23478-4f36-7aa0-a893-029d536477f7";
const LIMIT_RUN = "2026-12-02T01:57:08.000Z";
// the same with the limit named for a model (x-codex-limit-name)
const NAMED = "rollout-2026-12-02T01-55-36-01a23476-e549-7a10-98ba-96c4a83f1974.jsonl";
const NAMED_RUN = "2026-12-02T01:55:35.500Z";
// an answer with a second limit's headers beside the general one (x-codex-other-*), then the usage limit
const FAMILY = "rollout-2026-12-02T01-55-41-01a23476-f871-7b63-96a9-af688ed5fd1f.jsonl";
const FAMILY_RUN = "2026-12-02T01:55:40.500Z";
// the resets sent as x-codex-*-reset-after-seconds, which Codex 0.171 does not read
const AFTER = "rollout-2026-12-02T01-55-31-01a23476-d181-71b3-ba98-1ddb3de2d7bf.jsonl";
const AFTER_RUN = "2026-12-02T01:55:30.500Z";
const CWD = "/home/user/project";

const PRIMARY = { name: "primary", usedPercent: 37.5, resetsAt: "2026-12-02T04:10:08.000Z", windowMinutes: 300 };
const SECONDARY = { name: "secondary", usedPercent: 61, resetsAt: "2026-12-05T08:57:08.000Z", windowMinutes: 10080 };
const REFUSAL =
  "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 4:10 AM.";
const LIMITED: NativeQuota = {
  windows: [{ ...PRIMARY, usedPercent: 100 }, SECONDARY],
  exhausted: { kind: "session", reset_at: PRIMARY.resetsAt, text: REFUSAL },
};

let hooks: ProviderHooks;
const problems: HookProblem[] = [];
let scratch: string;

beforeAll(async () => {
  const record = await loadManifestFile(join(root, "manifests", "codex.json"), "built-in");
  hooks = await openProvider(record, { report: (problem) => problems.push(problem) });
});

afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  expect(problems).toEqual([]);
});

function home(): string {
  scratch = mkdtempSync(join(tmpdir(), "uuldana-codex-quota-"));
  return join(scratch, "codex-home");
}

const fixture = (name: string): string => readFileSync(join(fixtures, "quota", "codex", name), "utf8");
// the file as it was when the first answer had been written: up to its first task_complete
const answered = (name: string): string => {
  const lines = fixture(name).split("\n");
  return `${lines.slice(0, lines.findIndex((line) => line.includes('"type":"task_complete"')) + 1).join("\n")}\n`;
};

// A rollout file where Codex puts it: sessions/YYYY/MM/DD/ of the date in its name.
function place(codexHome: string, name: string, text = fixture(name)): string {
  const [, year, month, day] = /^rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(name)!;
  const folder = join(codexHome, "sessions", year!, month!, day!);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, name), text);
  return join(folder, name);
}

function query(codexHome: string, started: string, more: Partial<QuotaQuery> = {}): QuotaQuery {
  return { cwd: CWD, env: { HOME: join(scratch, "home"), CODEX_HOME: codexHome }, started: new Date(started), sessionId: undefined, feed: undefined, ...more };
}

// The same session under another id (its file name and its meta).
function twin(name: string, text: string, id: string, newId: string): [string, string] {
  return [name.replace(id, newId), text.replaceAll(id, newId)];
}

// The sessions folder and the date folders a run's start and the present give, in any zone (the UTC dates 14 hours
// either side of each), with the other folders given, in order.
function watchedFolders(codexHome: string, started: string, ...more: string[]): string[] {
  const sessions = join(codexHome, "sessions");
  const days = new Set(more.map((day) => join(sessions, ...day.split("-"))));
  for (const at of [Date.parse(started), Date.now()]) {
    for (const shift of [-14, 0, 14]) days.add(join(sessions, ...new Date(at + shift * 3_600_000).toISOString().slice(0, 10).split("-")));
  }
  return [sessions, ...[...days].sort()];
}

// The fixture's lines with each of its token counts and its refusal changed.
function edited(name: string, change: (line: string) => string | undefined): string {
  return fixture(name)
    .split("\n")
    .map((line) => (line.includes('"token_count"') || line.includes('"task_complete"') ? change(line) : line))
    .filter((line) => line !== undefined)
    .join("\n");
}

describe("Codex CLI's quota", () => {
  it("is the windows and exact resets of the run's latest token count, as the real Codex wrote them", () => {
    const codexHome = home();
    place(codexHome, LIMIT, answered(LIMIT));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY] });
  });

  it("is the allowance gone at the usage limit: a session limit with the 5-hour window's exact reset and Codex's words", () => {
    const codexHome = home();
    place(codexHome, LIMIT);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual(LIMITED);
  });

  it("is gone at the limit a count names, at a full window with no credits, or at a refusal alone; a later answer takes it back", () => {
    const codexHome = home();
    const full = { ...PRIMARY, usedPercent: 100 };
    const gone = { kind: "session", reset_at: PRIMARY.resetsAt };
    // the full window alone, without the refusal and the limit named
    place(codexHome, LIMIT, edited(LIMIT, (line) => (line.includes('"error"') ? undefined : line.replace('"rate_limit_reached_type":"rate_limit_reached"', '"rate_limit_reached_type":null'))));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [full, SECONDARY], exhausted: gone });
    // with credits to go on with, a full window is no stop
    place(codexHome, LIMIT, edited(LIMIT, (line) => (line.includes('"error"') ? undefined : line.replace('"rate_limit_reached_type":"rate_limit_reached"', '"rate_limit_reached_type":null').replace('"has_credits":false', '"has_credits":true'))));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [full, SECONDARY] });
    // the limit named reached, the windows below full: the fullest window ran out
    place(codexHome, LIMIT, edited(LIMIT, (line) => (line.includes('"error"') ? undefined : line.replace('"used_percent":100.0', '"used_percent":99.5'))));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [{ ...PRIMARY, usedPercent: 99.5 }, SECONDARY], exhausted: gone });
    // the workspace's credits depleted
    place(codexHome, LIMIT, edited(LIMIT, (line) => (line.includes('"error"') ? undefined : line.replace('"rate_limit_reached"', '"workspace_member_credits_depleted"'))));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))?.exhausted).toEqual({ kind: "credits", reset_at: PRIMARY.resetsAt });
    // a refusal after counts that show no limit (a response without the headers): Codex's words, no window of its own
    place(codexHome, LIMIT, edited(LIMIT, (line) => (line.includes('"used_percent":100.0') ? line.replace(/"primary":\{[^}]*\},"secondary":\{[^}]*\}/, '"primary":null,"secondary":null').replace('"rate_limit_reached"', "null") : line)));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY], exhausted: { text: REFUSAL } });
    // an answer after the limit, its count below full
    const [count] = answered(LIMIT).split("\n").filter((line) => line.includes('"token_count"'));
    place(codexHome, LIMIT, `${fixture(LIMIT)}${count!.replace("01:57:09.857Z", "01:57:30.000Z").replace('"used_percent":37.5', '"used_percent":2.5')}\n`);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [{ ...PRIMARY, usedPercent: 2.5 }, SECONDARY] });
  });

  it("names a model's own limit after it, and says it is that limit that is gone", () => {
    const codexHome = home();
    place(codexHome, NAMED, answered(NAMED));
    const primary = { name: "gpt-loopback-sonic primary", usedPercent: 42.5, resetsAt: "2026-12-02T04:55:53.000Z", windowMinutes: 300 };
    const secondary = { name: "gpt-loopback-sonic secondary", usedPercent: 61, resetsAt: "2026-12-06T01:56:09.000Z", windowMinutes: 10080 };
    expect(hooks.quota(query(codexHome, NAMED_RUN))).toEqual({ windows: [primary, secondary] });
    place(codexHome, NAMED);
    expect(hooks.quota(query(codexHome, NAMED_RUN))).toEqual({
      windows: [{ ...primary, usedPercent: 100 }, secondary],
      exhausted: { kind: "per-model", reset_at: primary.resetsAt, text: "You’ve hit your usage limit for gpt-loopback-sonic. Switch to another model now, or try again at 4:55 AM." },
    });
  });

  it("keeps each limit's latest windows when the API reports two and Codex writes one at a time", () => {
    const codexHome = home();
    place(codexHome, FAMILY, answered(FAMILY));
    const other = { name: "gpt-other primary", usedPercent: 12, resetsAt: "2026-12-02T02:25:40.000Z", windowMinutes: 60 };
    expect(hooks.quota(query(codexHome, FAMILY_RUN))).toEqual({ windows: [other] });
    place(codexHome, FAMILY);
    expect(hooks.quota(query(codexHome, FAMILY_RUN))).toEqual({
      windows: [
        { name: "primary", usedPercent: 100, resetsAt: "2026-12-02T04:55:57.000Z", windowMinutes: 300 },
        { name: "secondary", usedPercent: 61, resetsAt: "2026-12-06T01:56:13.000Z", windowMinutes: 10080 },
        other,
      ],
      exhausted: { kind: "session", reset_at: "2026-12-02T04:55:57.000Z", text: REFUSAL.replace("4:10 AM", "4:55 AM") },
    });
  });

  it("has no reset where Codex wrote none, and reads the resets_in_seconds of older versions from the count's time", () => {
    const codexHome = home();
    place(codexHome, AFTER);
    expect(hooks.quota(query(codexHome, AFTER_RUN))).toEqual({
      windows: [
        { name: "primary", usedPercent: 100, windowMinutes: 300 },
        { name: "secondary", usedPercent: 61, windowMinutes: 10080 },
      ],
      exhausted: { kind: "session", text: REFUSAL.replace("4:10 AM", "4:55 AM") },
    });
    place(codexHome, LIMIT, edited(LIMIT, (line) => line.replace('"resets_at":1796184608', '"resets_in_seconds":7858').replace('"resets_at":1796461028', '"resets_in_seconds":250000')));
    // the first count was written at 01:57:09.857, the second at 01:57:11.307
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({
      windows: [
        { ...PRIMARY, usedPercent: 100, resetsAt: "2026-12-02T04:08:09.307Z" },
        { ...SECONDARY, resetsAt: "2026-12-04T23:23:51.307Z" },
      ],
      exhausted: { kind: "session", reset_at: "2026-12-02T04:08:09.307Z", text: REFUSAL },
    });
  });

  it("is read only from the run's own rollout file, never another session's, a sub-agent's or another account's", () => {
    const codexHome = home();
    place(codexHome, LIMIT, answered(LIMIT));
    // a session in another folder, written during the run, at 99%
    const [otherName, otherText] = twin(LIMIT, answered(LIMIT).replaceAll(CWD, "/home/user/other").replace('"used_percent":37.5', '"used_percent":99.0'), LIMIT_ID, "01a23478-4f36-7aa0-a893-aaaaaaaaaaaa");
    place(codexHome, otherName, otherText);
    // a sub-agent's thread of the run, in the same folder, at its limit
    const [childName, childText] = twin(LIMIT, fixture(LIMIT).replace('"account_scoped":true,', `"account_scoped":true,"parent_thread_id":"${LIMIT_ID}",`), LIMIT_ID, "01a23478-4f36-7aa0-a893-bbbbbbbbbbbb");
    place(codexHome, childName, childText);
    // a session of the same folder that began before the run and wrote nothing during it
    place(codexHome, NAMED);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY] });
    // the account is the run's own: CODEX_HOME, else ~/.codex under the run's HOME
    const userHome = join(scratch, "home");
    place(join(userHome, ".codex"), LIMIT);
    expect(hooks.quota({ ...query(codexHome, LIMIT_RUN), env: { HOME: userHome } })).toEqual(LIMITED);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY] });
    expect(hooks.quota({ ...query(codexHome, LIMIT_RUN), env: {} })).toBeUndefined();
    // two sessions that fit the run equally: neither is read
    const [sameName, sameText] = twin(LIMIT, fixture(LIMIT), LIMIT_ID, "01a23478-4f36-7aa0-a893-cccccccccccc");
    place(codexHome, sameName, sameText);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
  });

  it("is nothing before Codex wrote a count with windows, for a file written before the run, or one of another shape", () => {
    const codexHome = home();
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    const lines = fixture(LIMIT).split("\n");
    place(codexHome, LIMIT, `${lines.slice(0, lines.findIndex((line) => line.includes('"token_count"'))).join("\n")}\n`);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    const file = place(codexHome, LIMIT);
    const before = new Date(LIMIT_RUN).getTime() / 1000 - 60;
    utimesSync(file, before, before);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    place(codexHome, LIMIT, lines.slice(1).join("\n"));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
  });

  it("never throws on a torn, huge or hostile line, and keeps the reading the real lines give", () => {
    const codexHome = home();
    const text = fixture(LIMIT);
    // torn in the middle of the refusal: the count before it still says the limit was reached
    place(codexHome, LIMIT, text.slice(0, text.lastIndexOf("usage_limit_exceeded") - 30));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: LIMITED.windows, exhausted: { kind: "session", reset_at: PRIMARY.resetsAt } });
    const at = '"timestamp":"2026-12-02T01:57:10.000Z"';
    const count = (limits: string): string => `{${at},"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":${limits}}}`;
    const hostile = [
      count('"full"'),
      count('{"primary":[1],"secondary":"x"}'),
      count('{"primary":{"used_percent":"97"},"secondary":{"used_percent":-4}}'),
      count('{"primary":{"used_percent":1e400,"resets_at":1e300},"rate_limit_reached_type":7}'),
      count("null"),
      `{${at},"type":"event_msg","payload":{"type":"task_complete","error":"usage_limit_exceeded"}}`,
      `{${at},"type":"event_msg","payload":null,"token_count":1}`,
      `{"type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":100}}}}`,
      `["token_count"]`,
      `"token_count"`,
      `${"[".repeat(30_000)}"token_count"${"]".repeat(30_000)}`,
    ];
    const huge = `{${at},"type":"event_msg","payload":{"type":"token_count","note":"${"x".repeat(3 * 1024 * 1024)}"}}`;
    const lines = answered(LIMIT).trimEnd().split("\n");
    // the hostile lines after the answer's count, a huge line before it: the real count stands
    place(codexHome, LIMIT, `${[...lines.slice(0, -2), huge, ...lines.slice(-2), ...hostile].join("\n")}\n`);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY] });
    // a line longer than the end that is read, after the last count, leaves no reading until the next count
    place(codexHome, LIMIT, `${[...lines, huge].join("\n")}\n`);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    place(codexHome, LIMIT, `${[...lines, huge, ...lines.slice(-2)].join("\n")}\n`);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual({ windows: [PRIMARY, SECONDARY] });
    expect(hooks.quotaFiles(query(codexHome, LIMIT_RUN))).toContain(join(codexHome, "sessions", "2026", "12", "02", LIMIT));
    // hostile queries
    for (const bad of [undefined, null, 5, {}, { ...query(codexHome, LIMIT_RUN), started: "yesterday" }, { ...query(codexHome, LIMIT_RUN), env: null }, { ...query(codexHome, LIMIT_RUN), started: new Date(8.64e15) }]) {
      expect(hooks.quota(bad as unknown as QuotaQuery)).toBeUndefined();
      expect(Array.isArray(hooks.quotaFiles(bad as unknown as QuotaQuery))).toBe(true);
    }
  });

  it("reads a huge rollout file by its first line and its end only, within the hooks' budget, and never a first line past its bound", () => {
    const codexHome = home();
    const lines = fixture(LIMIT).trimEnd().split("\n");
    // another limit's count that only a read of more than the file's last mebibyte would see
    const [count] = lines.filter((line) => line.includes('"token_count"'));
    const hidden = count!.replace('"limit_id":"codex"', '"limit_id":"codex_hidden"');
    // a 2 GiB file, sparse: its meta, nothing for two gigabytes, the hidden count, two mebibytes of nothing, then the
    // end of the session
    const file = place(codexHome, LIMIT, `${lines[0]}\n`);
    truncateSync(file, 2 * 1024 ** 3);
    appendFileSync(file, `\n${hidden}\n`);
    appendFileSync(file, Buffer.alloc(2 * 1024 * 1024));
    appendFileSync(file, `\n${lines.slice(1).join("\n")}\n`);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      let reading: unknown;
      times.push(cpuMs(() => void (reading = hooks.quota(query(codexHome, LIMIT_RUN)))));
      expect(reading).toEqual(LIMITED);
    }
    expect(Math.min(...times)).toBeLessThan(50);
    // the hidden count near the end, where what is read holds it
    place(codexHome, LIMIT, [...lines.slice(0, -2), hidden, ...lines.slice(-2)].join("\n"));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))?.windows.map((window) => window.name)).toEqual(["primary", "secondary", "codex_hidden primary", "codex_hidden secondary"]);
    // no count in the last 64 KiB (an item of 200 KB after it): the last mebibyte is read
    const item = `{"timestamp":"2026-12-02T01:57:11.400Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"${"y".repeat(200 * 1024)}"}]}}`;
    place(codexHome, LIMIT, [...lines, item].join("\n"));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toEqual(LIMITED);
    // a first line longer than a mebibyte is not a meta that is read
    place(codexHome, LIMIT, lines.join("\n").replace('"account_scoped":true,', `"account_scoped":true,"padding":"${"x".repeat(1024 * 1024)}",`));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
  });

  it("never waits on a FIFO nor follows a link put where a rollout file or a date folder was", () => {
    const codexHome = home();
    const real = place(join(scratch, "elsewhere"), LIMIT);
    const folder = join(codexHome, "sessions", "2026", "12", "02");
    mkdirSync(folder, { recursive: true });
    execFileSync("mkfifo", [join(folder, "rollout-2026-12-02T01-57-10-fifo.jsonl")]);
    symlinkSync(real, join(folder, LIMIT));
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    expect(hooks.quotaFiles(query(codexHome, LIMIT_RUN))).toEqual(watchedFolders(codexHome, LIMIT_RUN));
    rmSync(join(codexHome, "sessions"), { recursive: true });
    mkdirSync(join(codexHome, "sessions", "2026", "12"), { recursive: true });
    symlinkSync(join(scratch, "elsewhere", "sessions", "2026", "12", "02"), folder);
    expect(hooks.quota(query(codexHome, LIMIT_RUN))).toBeUndefined();
    expect(hooks.quotaFiles(query(codexHome, LIMIT_RUN))).toEqual(watchedFolders(codexHome, LIMIT_RUN));
  });
});

describe("Codex CLI's files to watch for quota", () => {
  it("are the sessions folder, the date folders of the run's start and of the present, and the run's own file", () => {
    const codexHome = home();
    const file = place(codexHome, LIMIT, answered(LIMIT));
    // begun at 01:57 UTC: the folders of 2026/12/01 and 2026/12/02, as a zone east or west of UTC would write them
    const watched = hooks.quotaFiles(query(codexHome, LIMIT_RUN));
    expect(watched).toEqual([...watchedFolders(codexHome, LIMIT_RUN), file]);
    expect(watched).toContain(join(codexHome, "sessions", "2026", "12", "01"));
  });

  it("take the run's own file in the folder of the CLI's local date, a day from the UTC one", () => {
    const codexHome = home();
    // begun at 01:57 UTC under a zone west of UTC: in the folder of the local date, 2026/12/01
    const file = place(codexHome, LIMIT.replace("2026-12-02T01-57-09", "2026-12-01T17-57-09"), answered(LIMIT));
    expect(hooks.quotaFiles(query(codexHome, LIMIT_RUN))).toEqual([...watchedFolders(codexHome, LIMIT_RUN), file]);
  });

  it("take the folders of the four sessions written last, where a resumed one goes on, and no older one", () => {
    const codexHome = home();
    const days = ["2026-10-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"];
    days.forEach((day, i) => {
      const old = place(codexHome, `rollout-${day}T09-00-00-01a20000-0000-7000-8000-00000000000${i}.jsonl`, fixture(NAMED));
      utimesSync(old, 1_790_000_000 + i, 1_790_000_000 + i);
    });
    const watched = hooks.quotaFiles(query(codexHome, LIMIT_RUN));
    expect(watched).toEqual(watchedFolders(codexHome, LIMIT_RUN, "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"));
    expect(watched).not.toContain(join(codexHome, "sessions", "2026", "10", "20"));
  });

  it("are the folders Codex will write to even before it made them, and nothing without an account folder", () => {
    const codexHome = home();
    expect(hooks.quotaFiles(query(codexHome, LIMIT_RUN))).toEqual(watchedFolders(codexHome, LIMIT_RUN));
    const userHome = join(scratch, "nobody");
    expect(hooks.quotaFiles({ ...query(codexHome, LIMIT_RUN), env: { HOME: userHome } })).toEqual(watchedFolders(join(userHome, ".codex"), LIMIT_RUN));
    expect(hooks.quotaFiles({ ...query(codexHome, LIMIT_RUN), env: {} })).toEqual([]);
  });
});
