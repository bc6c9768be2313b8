import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { readCooldowns, updateCooldowns } from "../core/session/cooldowns.js";
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

function writer(data: string, prefix: string, count: number, holdMs = 0, waitMs?: number): Writer {
  const args = [join(fixtures, "write-cooldowns.mjs"), data, prefix, String(count), String(holdMs), ...(waitMs ? [String(waitMs)] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  return { pid: child.pid!, out: () => out, done: new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err }))) };
}

function holderPid(data: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(lockDir(data), "holder.json"), "utf8")) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

// each trial starts writer processes: on a loaded machine a node process alone can take seconds to start
describe("the cooldown lock, with real writer processes", () => {
  it("never takes a paused holder's lock: the other writer waits a bounded time, says so, and loses no row (0 of 20 trials)", async () => {
    const trials = 20;
    let lost = 0;
    let paused = 0;
    for (let trial = 0; trial < trials; trial++) {
      const data = join(sandbox.dir, `paused-${trial}`);
      mkdirSync(data, { mode: 0o700 });
      // a holds the lock 150 ms in each of its 3 writes; it is stopped while it holds it
      const a = writer(data, "a", 3, 150, 2000);
      let stopped = false;
      const deadline = Date.now() + 10_000;
      while (!stopped && Date.now() < deadline) {
        if (holderPid(data) === a.pid) {
          process.kill(a.pid, "SIGSTOP");
          // it may have let go just before it stopped
          if (holderPid(data) === a.pid) stopped = true;
          else process.kill(a.pid, "SIGCONT");
        }
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // b waits at most 100 ms each time; a stays stopped until b has given up at least once, and 200 ms more
      const b = writer(data, "b", 20, 0, 100);
      if (stopped) {
        paused++;
        await waitFor(() => b.out() !== "", "the other writer to give up waiting", 10_000);
        await new Promise((resolve) => setTimeout(resolve, 200));
        process.kill(a.pid, "SIGCONT");
      }
      const [ra, rb] = await Promise.all([a.done, b.done]);
      expect([ra.code, rb.code, ra.err, rb.err]).toEqual([0, 0, "", ""]);
      // the paused holder never lost its lock: at most it waited for b's (on a busy machine)
      const waitedForB = `cannot write ${tableFile(data)} now: it is locked by process ${b.pid} `;
      expect(ra.out.split("\n").filter((line) => line && !line.startsWith(waitedForB))).toEqual([]);
      if (stopped) {
        expect(rb.out.split("\n")[0]).toMatch(
          new RegExp(`^cannot write ${tableFile(data)} now: it is locked by process ${a.pid} \\(since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\), which is still running; uuldana keeps the change and writes it as soon as it can$`),
        );
      }
      const table = await readCooldowns(data);
      expect(table.problem).toBeUndefined();
      if (table.entries.size !== 23) lost++;
      expect(readdirSync(data)).toEqual(["cooldowns.json"]);
    }
    expect({ paused, lost }).toEqual({ paused: trials, lost: 0 });
  }, 600_000);

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

  it("never takes a live holder's lock, however old; the change waits in this process and is written once the holder is gone", async () => {
    const pid = liveProcess();
    placeLock({ pid, since: "1999-01-01T00:00:00.000Z" });
    // old by every clock a lock could be judged by: its record, its folder and its file
    const old = new Date("1999-01-01T00:00:00Z");
    utimesSync(join(lockDir(), "holder.json"), old, old);
    utimesSync(lockDir(), old, old);
    const record = readFileSync(join(lockDir(), "holder.json"), "utf8");
    const started = Date.now();
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")), new Date(), { waitMs: 300 });
    const waited = Date.now() - started;
    expect(write).toEqual({
      written: false,
      notice: `cannot write ${tableFile()} now: it is locked by process ${pid} (since 1999-01-01 00:00:00 UTC), which is still running; uuldana keeps the change and writes it as soon as it can`,
    });
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(2000);
    // the table was left alone, the lock too
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json.lock"]);
    expect(readFileSync(join(lockDir(), "holder.json"), "utf8")).toBe(record);
    // this process counts the rest already
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["codex"]);
    process.kill(pid, "SIGKILL");
    await waitFor(() => !isAlive(pid), "the holder to be gone");
    expect(await updateCooldowns(sandbox.data, (entries) => void entries.set("claude-code", row("limit")))).toEqual({ written: true, notice: undefined });
    expect(Object.keys(JSON.parse(readFileSync(tableFile(), "utf8")).entries)).toEqual(["codex", "claude-code"]);
  });

  it("writes a kept change before the process exits once the holder is gone, and says so on stderr when it still cannot", async () => {
    const pid = liveProcess();
    placeLock({ pid });
    const stuck = await writer(sandbox.data, "stuck", 1, 0, 100).done;
    const notice = `cannot write ${tableFile()} now: it is locked by process ${pid} (since 2026-11-30 12:00:03 UTC), which is still running`;
    expect(stuck).toEqual({
      code: 0,
      out: `${notice}; uuldana keeps the change and writes it as soon as it can\n`,
      err: `uuldana: a change to the cooldown table could not be written before exit: ${notice}\n`,
    });
    const late = writer(sandbox.data, "late", 1, 0, 100);
    await waitFor(() => late.out() !== "", "the notice");
    process.kill(pid, "SIGKILL");
    expect(await late.done).toEqual({ code: 0, out: `${notice}; uuldana keeps the change and writes it as soon as it can\n`, err: "" });
    expect([...(await readCooldowns(sandbox.data)).entries.keys()]).toEqual(["late0"]);
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it.each([
    ["another host", { host: "build-server-7", boot: "e3b0c442-0000-0000-0000-000000000000" }, 'on host "build-server-7"'],
    ["another container", { boot: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), pidns: "pid:[4026531000]" }, "in another container (pid namespace)"],
  ])("never takes the lock of a holder in %s, and says how to remove it", async (_, holder, where) => {
    placeLock({ pid: 4242, ...holder });
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")), new Date(), { waitMs: 100, keep: false });
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
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("limit")), new Date(), { waitMs: 5000, keep: false });
    expect(Date.now() - started).toBeLessThan(500);
    expect(process.cpuUsage(cpu).user).toBeLessThan(500_000);
    expect(write).toEqual({ written: false, notice: `cannot write ${tableFile()} now: ${lockDir()} ${what}; if no uuldana is running, remove it (rm -r ${lockDir()})` });
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json.lock"]);
  });

  it("a torn holder record counts as stray", async () => {
    mkdirSync(lockDir());
    writeFileSync(join(lockDir(), "holder.json"), '{"pid": 12');
    const write = await updateCooldowns(sandbox.data, () => undefined, new Date(), { keep: false });
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
  it("does not wait on it: the next agent starts, the user is told once, and the rest is written once the table is free", async () => {
    installAgents(sandbox, ["limit", "line"]);
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    writeFileSync(lockDir(), "locked\n");
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "banner" }, cols: 400 });
    terminals.push(terminal);
    const screen = await terminal.waitFor("line agent ready", 20_000);
    const notice = `uuldana: limit's rest until ${LIMIT_RESET.shown} is not in the cooldown table yet: cannot write ${tableFile()} now: ${lockDir()} is a file, not a lock uuldana made; if no uuldana is running, remove it (rm -r ${lockDir()}); uuldana keeps the change and writes it as soon as it can`;
    expect(screen.filter((line) => line === notice)).toHaveLength(1);
    expect(screen.indexOf(notice)).toBeLessThan(screen.findIndex((line) => line.includes("continuing with line")));
    // the user removes the stray lock; a retry writes the rest while line runs
    rmSync(lockDir());
    await waitFor(() => readdirSync(sandbox.data).includes("cooldowns.json"), "the rest to be written", 10_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const listed = JSON.parse((await sandbox.run(["cooldowns", "--json"])).stdout) as { entry: string }[];
    expect(listed.map((entry) => entry.entry)).toEqual(["limit"]);
    expect(terminal.text()).not.toContain("could not be written before exit");
  });
});
