import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { readCooldowns, recordRests, updateCooldowns } from "../core/session/cooldowns.js";
import { installAgents } from "./agents.js";
import { bin, fixtures, isAlive, LIMIT_RESET, makeSandbox, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const children: ChildProcess[] = [];
const terminals: TestTerminal[] = [];
beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

const row = (text: string) => ({ until: new Date(Date.now() + 3_600_000), since: new Date(), source: "inferred" as const, kind: "weekly", text });
const lockDir = (data = sandbox.data) => join(data, "cooldowns.json.lock");
const tableFile = (data = sandbox.data) => join(data, "cooldowns.json");

// A lock folder as another process would have left it, with this holder record.
function placeLock(holder: Record<string, unknown>): void {
  mkdirSync(lockDir(), { recursive: true });
  writeFileSync(join(lockDir(), "holder.json"), JSON.stringify({ token: "0123456789abcdef01234567", host: hostname(), since: "2026-11-30T12:00:03.000Z", ...holder }));
}

// A process that runs until the test ends, to hold a lock.
function liveProcess(): number {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  return child.pid!;
}

// The pid of a process that has exited (and was reaped).
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
}

interface Writer {
  pid: number;
  out: () => string;
  done: Promise<{ code: number | null; out: string; err: string }>;
}

function writer(data: string, prefix: string, count: number, waitMs?: number): Writer {
  const args = [join(fixtures, "write-cooldowns.mjs"), data, prefix, String(count), ...(waitMs ? [String(waitMs)] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  return { pid: child.pid!, out: () => out, done: new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err }))) };
}

// A real process that takes the table's lock in a data dir when told to ("take DIR" on its stdin), says "held", and
// lets it go at "release" ("released"); stopped (SIGSTOP) while it holds it, it is a uuldana paused in the middle of
// a write, past every wait. One for all trials: a process started for each would take most of the test's time.
function lockHolder(): { pid: number; say: (line: string, answer: string) => Promise<void> } {
  const child = spawn(process.execPath, [join(fixtures, "hold-cooldowns-lock.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const say = async (line: string, answer: string): Promise<void> => {
    out = "";
    child.stdin!.write(`${line}\n`);
    await waitFor(() => out === `${answer}\n`, `the holder to say ${answer}`, 10_000);
  };
  return { pid: child.pid!, say };
}

const savedNote = "the rest is saved in a file of its own beside the table, and the next write adds it";
const pendingFiles = (data: string) => readdirSync(data).filter((name) => /^cooldowns\.json\.pending-[0-9a-f]{24}$/.test(name));

// each trial starts writer processes: on a loaded machine a node process alone can take seconds to start
describe("the cooldown lock, with real writer processes", () => {
  it("loses no rest when the holder is paused past every wait and the other writer exits: saved beside the table, counted, merged by the next write (0 of 20 trials lost)", async () => {
    const trials = 20;
    let lost = 0;
    const holder = lockHolder();
    for (let trial = 0; trial < trials; trial++) {
      const data = join(sandbox.dir, `paused-${trial}`);
      mkdirSync(data, { mode: 0o700 });
      await holder.say(`take ${data}`, "held");
      process.kill(holder.pid, "SIGSTOP");
      // b waits 50 ms for each of its two rests, gives up, saves them beside the table and exits
      const b = await writer(data, "b", 2, 50).done;
      const notice = new RegExp(`^cannot write ${tableFile(data)} now: it is locked by process ${holder.pid} \\(since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\), which is still running; ${savedNote}$`);
      expect([b.code, b.err]).toEqual([0, ""]);
      expect(b.out.split("\n").slice(0, -1).map((line) => notice.test(line))).toEqual([true, true]);
      // b is gone and the holder still paused: its rests count already, from their files, 0600 each
      expect(pendingFiles(data)).toHaveLength(2);
      // and the paused holder's lock is still its own
      expect(readdirSync(data).sort()).toEqual(["cooldowns.json.lock", ...pendingFiles(data)].sort());
      for (const file of pendingFiles(data)) expect(statSync(join(data, file)).mode & 0o777).toBe(0o600);
      const seen = [...(await readCooldowns(data)).entries.keys()].sort();
      // the holder goes on and lets go; the next write merges the saved rests into the table and removes them
      process.kill(holder.pid, "SIGCONT");
      await holder.say("release", "released");
      expect((await recordRests(data, new Map([["next", row("limit")]]))).written).toBe(true);
      const table = JSON.parse(readFileSync(tableFile(data), "utf8")) as { entries: Record<string, unknown> };
      if (seen.join() !== "b0,b1" || Object.keys(table.entries).sort().join() !== "b0,b1,next") lost++;
      expect(readdirSync(data)).toEqual(["cooldowns.json"]);
    }
    expect(lost).toBe(0);
  }, 600_000);

  it("loses no row with five writers at once (5 × 80 rests, a 20 ms wait: many are saved beside the table)", async () => {
    const data = join(sandbox.dir, "stress");
    mkdirSync(data, { mode: 0o700 });
    const writers = ["a", "b", "c", "d", "e"].map((prefix) => writer(data, prefix, 80, 20));
    const results = await Promise.all(writers.map((one) => one.done));
    expect(results.map((result) => [result.code, result.err])).toEqual(Array(5).fill([0, ""]));
    // every notice is a busy lock (held, or let go and taken again too often to wait for) and a rest saved
    const notices = results.flatMap((result) => result.out.split("\n").filter(Boolean));
    const busy = [`, which is still running; ${savedNote}`, `${lockDir(data)} kept changing hands; nothing was taken; ${savedNote}`];
    expect(notices.filter((line) => !busy.some((end) => line.endsWith(end)))).toEqual([]);
    expect((await readCooldowns(data)).entries.size).toBe(400);
    expect((await writer(data, "last", 1).done).code).toBe(0);
    expect(Object.keys((JSON.parse(readFileSync(tableFile(data), "utf8")) as { entries: object }).entries)).toHaveLength(401);
    expect(readdirSync(data)).toEqual(["cooldowns.json"]);
  }, 60_000);

  it("keeps the table parseable through kill -9 at random moments, and the next write removes what a killed writer left (25 trials)", async () => {
    const trials = 25;
    let leftBehind = 0;
    for (let trial = 0; trial < trials; trial++) {
      const data = join(sandbox.dir, `killed-${trial}`);
      mkdirSync(data, { mode: 0o700 });
      const victim = writer(data, "a", 400);
      await waitFor(() => readdirSync(data).includes("cooldowns.json"), "the first write");
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      process.kill(victim.pid, "SIGKILL");
      await victim.done;
      // parseable whatever the moment: the table is only ever replaced by a rename
      expect(JSON.parse(readFileSync(tableFile(data), "utf8")).version).toBe(1);
      if (readdirSync(data).length > 1) leftBehind++;
      expect((await writer(data, "next", 1).done).code).toBe(0);
      expect(readdirSync(data)).toEqual(["cooldowns.json"]);
      expect((await readCooldowns(data)).entries.has("next0")).toBe(true);
    }
    // most kills leave a lock or a temporary folder: each is gone after the next write
    expect(leftBehind).toBeGreaterThan(0);
  }, 600_000);
});

describe("the cooldown lock's holder record", () => {
  it("takes a lock at once when its holder is gone: no process, or the pid now belongs to a process that started later", async () => {
    for (const holder of [{ pid: deadPid() }, { pid: liveProcess(), start: "1" }]) {
      placeLock(holder);
      const started = Date.now();
      const write = await updateCooldowns(sandbox.data, (entries) => void entries.set(`after-${holder.pid}`, row("limit")), new Date(), { waitMs: 5000 });
      expect(write).toEqual({ written: true, notice: undefined });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
    }
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toHaveLength(2);
  });

  it("takes an empty lock folder (uuldana never leaves one)", async () => {
    mkdirSync(lockDir());
    expect((await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")))).written).toBe(true);
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it("never takes a live holder's lock, however old; the rest is saved beside the table, counts at once, and the first write once the holder is gone merges it", async () => {
    const pid = liveProcess();
    placeLock({ pid, since: "1999-01-01T00:00:00.000Z" });
    // old by every clock a lock could be judged by: its record, its folder and its file
    const old = new Date("1999-01-01T00:00:00Z");
    utimesSync(join(lockDir(), "holder.json"), old, old);
    utimesSync(lockDir(), old, old);
    const record = readFileSync(join(lockDir(), "holder.json"), "utf8");
    const started = Date.now();
    const write = await recordRests(sandbox.data, new Map([["codex", row("limit")]]), new Date(), { waitMs: 300 });
    const waited = Date.now() - started;
    const saved = pendingFiles(sandbox.data);
    expect(write).toEqual({
      written: false,
      notice: `cannot write ${tableFile()} now: it is locked by process ${pid} (since 1999-01-01 00:00:00 UTC), which is still running; ${savedNote}`,
      saved: join(sandbox.data, saved[0]!),
    });
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(2000);
    // the table and the lock were left alone; the rest is in a file of its own
    expect(readdirSync(sandbox.data).sort()).toEqual(["cooldowns.json.lock", saved[0]]);
    expect(readFileSync(join(lockDir(), "holder.json"), "utf8")).toBe(record);
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["codex"]);
    process.kill(pid, "SIGKILL");
    await waitFor(() => !isAlive(pid), "the holder to be gone");
    expect(await recordRests(sandbox.data, new Map([["claude-code", row("limit")]]))).toEqual({ written: true, notice: undefined });
    expect(Object.keys(JSON.parse(readFileSync(tableFile(), "utf8")).entries)).toEqual(["codex", "claude-code"]);
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it("a rest its writer could not write outlives the writer: nothing is said at exit, and it is there", async () => {
    const pid = liveProcess();
    placeLock({ pid });
    const stuck = await writer(sandbox.data, "stuck", 1, 100).done;
    const notice = `cannot write ${tableFile()} now: it is locked by process ${pid} (since 2026-11-30 12:00:03 UTC), which is still running`;
    expect(stuck).toEqual({ code: 0, out: `${notice}; ${savedNote}\n`, err: "" });
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["stuck0"]);
    expect(JSON.parse((await sandbox.run(["cooldowns", "--json"])).stdout).map((rest: { entry: string }) => rest.entry)).toEqual(["stuck0"]);
    process.kill(pid, "SIGKILL");
    await waitFor(() => !isAlive(pid), "the holder to be gone");
    expect(await writer(sandbox.data, "late", 1, 100).done).toEqual({ code: 0, out: "", err: "" });
    expect(Object.keys(JSON.parse(readFileSync(tableFile(), "utf8")).entries).sort()).toEqual(["late0", "stuck0"]);
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it.each([
    ["another host", { host: "build-server-7", boot: "e3b0c442-0000-0000-0000-000000000000" }, 'on host "build-server-7"'],
    ["another container", { boot: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), pidns: "pid:[4026531000]" }, "in another container (pid namespace)"],
  ])("never takes the lock of a holder in %s, and says how to remove it", async (_, holder, where) => {
    placeLock({ pid: 4242, ...holder });
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")), new Date(), { waitMs: 100 });
    expect(write).toEqual({
      written: false,
      notice: `cannot write ${tableFile()} now: it is locked by process 4242 ${where} (since 2026-11-30 12:00:03 UTC), which uuldana cannot check from here; if no uuldana runs there, remove the lock (rm -r ${lockDir()})`,
    });
  });
});

describe("a stray lock that uuldana did not make", () => {
  it.each([
    ["a file", () => writeFileSync(lockDir(), "locked\n"), "is a file, not a lock uuldana made"],
    ["a named pipe", () => spawnSync("mkfifo", [lockDir()]), "is a named pipe (FIFO), not a lock uuldana made"],
    [
      "a folder without a holder record",
      () => (mkdirSync(lockDir()), writeFileSync(join(lockDir(), "notes.txt"), "x")),
      "is a folder without a holder record (holder.json), not a lock uuldana made",
    ],
  ])("%s: no wait and no spin, the path and the fix, the table left alone", async (_, make, what) => {
    make();
    const started = Date.now();
    const cpu = process.cpuUsage();
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")), new Date(), { waitMs: 5000 });
    expect(Date.now() - started).toBeLessThan(500);
    expect(process.cpuUsage(cpu).user).toBeLessThan(500_000);
    expect(write).toEqual({ written: false, notice: `cannot write ${tableFile()} now: ${lockDir()} ${what}; if no uuldana is running, remove it (rm -r ${lockDir()})` });
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json.lock"]);
  });

  it("a torn holder record counts as stray", async () => {
    mkdirSync(lockDir());
    writeFileSync(join(lockDir(), "holder.json"), '{"pid": 12');
    const write = await updateCooldowns(sandbox.data, () => undefined, new Date());
    expect(write.notice).toBe(`cannot write ${tableFile()} now: ${join(lockDir(), "holder.json")} is not a holder record uuldana wrote; if no uuldana is running, remove it (rm -r ${lockDir()})`);
  });

  it("uuldana cooldowns clear exits 1 naming the stray lock and the fix", async () => {
    writeFileSync(lockDir(), "locked\n");
    expect(await sandbox.run(["cooldowns", "clear"])).toEqual({
      code: 1,
      stdout: "",
      stderr: `uuldana: nothing was cleared: cannot write ${tableFile()} now: ${lockDir()} is a file, not a lock uuldana made; if no uuldana is running, remove it (rm -r ${lockDir()}) [E_COOLDOWNS_LOCKED]\n`,
    });
    rmSync(lockDir());
    expect(await sandbox.run(["cooldowns", "clear"])).toEqual({ code: 0, stdout: "No entry was resting.\n", stderr: "" });
  });
});

describe("a failover with a cooldown table that cannot be written", () => {
  it("does not wait on it: the next agent starts, the user is told once, and the rest, saved beside the table, counts at once", async () => {
    installAgents(sandbox, ["limit", "line"]);
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    writeFileSync(lockDir(), "locked\n");
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "banner" }, cols: 600 });
    terminals.push(terminal);
    const screen = await terminal.waitFor("line agent ready", 20_000);
    const notice = `uuldana: limit's rest until ${LIMIT_RESET.shown} is not in the cooldown table yet: cannot write ${tableFile()} now: ${lockDir()} is a file, not a lock uuldana made; if no uuldana is running, remove it (rm -r ${lockDir()}); ${savedNote}`;
    expect(screen.filter((line) => line === notice)).toHaveLength(1);
    expect(screen.indexOf(notice)).toBeLessThan(screen.findIndex((line) => line.includes("continuing with line")));
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(terminal.text()).not.toContain("could not be written before exit");
    // the stray lock is still there: the rest counts from its own file
    const listed = JSON.parse((await sandbox.run(["cooldowns", "--json"])).stdout) as { entry: string }[];
    expect(listed.map((entry) => entry.entry)).toEqual(["limit"]);
    expect(pendingFiles(sandbox.data)).toHaveLength(1);
    // the user removes the stray lock; the next write takes the rest into the table
    rmSync(lockDir());
    expect((await updateCooldowns(sandbox.data, () => undefined)).written).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(tableFile(), "utf8")).entries)).toEqual(["limit"]);
    expect(readdirSync(sandbox.data).filter((name) => name.startsWith("cooldowns"))).toEqual(["cooldowns.json"]);
  });

});
