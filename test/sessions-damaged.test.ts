import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { processStarted } from "../core/base/process.js";
import { installAgents } from "./agents.js";
import { bin, isAlive, makeSandbox, waitFor, type Sandbox } from "./helpers.js";

let sandbox: Sandbox;
const children: number[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => {
  for (const pid of children.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  sandbox.cleanup();
});

const at = "2026-11-30T12:00:00.000Z";
const line = (event: Record<string, unknown>): string => JSON.stringify({ at, ...event }) + "\n";
const start = line({ type: "session-start", cwd: "/w", pid: 999999999 });

function journal(id: string, content: string | Buffer): void {
  mkdirSync(join(sandbox.data, "sessions", id), { recursive: true });
  writeFileSync(join(sandbox.data, "sessions", id, "journal.jsonl"), content);
}

describe("a damaged journal", () => {
  // each journal as a crash, a disk or a hand could leave it, and the reason the listing gives
  const damaged: [string, string, () => void][] = [
    ["0zz00000a1", "journal.jsonl is empty", () => journal("0zz00000a1", "")],
    ["0zz00000a2", "journal.jsonl is empty", () => journal("0zz00000a2", "\n \n")],
    ["0zz00000a3", "line 1 is not JSON (cut off or overwritten)", () => journal("0zz00000a3", '{"at":"2026-11-30T12:00:00.000Z","type":"sess')],
    ["0zz00000a4", "journal.jsonl holds binary data, not JSON lines", () => journal("0zz00000a4", Buffer.from([0x7b, 0x00, 0x13, 0x88, 0xff, 0x0a]))],
    ["0zz00000a5", "journal.jsonl holds binary data, not JSON lines", () => journal("0zz00000a5", Buffer.concat([Buffer.from(start), Buffer.from([0xc3, 0x28, 0xff, 0x0a])]))],
    ["0zz00000a6", 'line 1 has no time: "at" is null', () => journal("0zz00000a6", JSON.stringify({ at: null, type: "session-start", cwd: "/w", pid: 1 }) + "\n")],
    ["0zz00000a7", 'line 2 has no time: "at" is "yesterday"', () => journal("0zz00000a7", start + JSON.stringify({ at: "yesterday", type: "run-start", entry: "codex" }) + "\n")],
    ["0zz00000a8", "line 1 is not a JSON object", () => journal("0zz00000a8", "[1,2,3]\n")],
    ["0zz00000a9", 'line 2 has no "type"', () => journal("0zz00000a9", start + line({ entry: "codex" }))],
    ["0zz00000b1", "line 2 is not JSON (cut off or overwritten)", () => journal("0zz00000b1", start + "garbage\n" + line({ type: "session-end", exit_code: 0 }))],
    ["0zz00000b2", "it has no session-start event", () => journal("0zz00000b2", line({ type: "run-start", entry: "codex", level: "ask" }))],
    ["0zz00000b3", "journal.jsonl is a folder, not a file", () => mkdirSync(join(sandbox.data, "sessions", "0zz00000b3", "journal.jsonl"), { recursive: true })],
    ["0zz00000b4", "journal.jsonl is not a regular file", () => {
      mkdirSync(join(sandbox.data, "sessions", "0zz00000b4"), { recursive: true });
      spawnSync("mkfifo", [join(sandbox.data, "sessions", "0zz00000b4", "journal.jsonl")]);
    }],
    ["0zz00000b5", "journal.jsonl is a symlink to a file that does not exist", () => {
      mkdirSync(join(sandbox.data, "sessions", "0zz00000b5"), { recursive: true });
      symlinkSync(join(sandbox.dir, "nowhere"), join(sandbox.data, "sessions", "0zz00000b5", "journal.jsonl"));
    }],
    ["0zz00000b6", "there is no journal.jsonl", () => mkdirSync(join(sandbox.data, "sessions", "0zz00000b6"), { recursive: true })],
  ];

  beforeEach(() => {
    for (const [, , make] of damaged) make();
    // beside them, a session that ended and one torn by a crash in its last line only: both read as usual
    journal("0zz0000zz1", start.replace("/w", "/ok") + line({ type: "run-start", entry: "codex", level: "ask" }) + line({ type: "session-end", exit_code: 0 }));
    journal("0zz0000zz2", start.replace("/w", "/torn") + line({ type: "run-start", entry: "codex", level: "ask" }) + '{"at":"2026-11-30T12:00:02.000Z","ty');
    // not sessions: a stray file, and a folder not named like an id
    writeFileSync(join(sandbox.data, "sessions", "notes"), "mine\n");
    mkdirSync(join(sandbox.data, "sessions", "Not-A-Session"));
  });

  it("is listed as damaged with its reason, and every other session as usual", async () => {
    const listed = await sandbox.run(["sessions", "--json"]);
    expect(listed.code).toBe(0);
    const sessions = JSON.parse(listed.stdout) as { id: string; state: string; reason?: string }[];
    expect(sessions.slice(0, 2)).toEqual([
      { id: "0zz0000zz2", started: at, cwd: "/torn", runs: ["codex"], state: "interrupted", exit_code: null },
      { id: "0zz0000zz1", started: at, cwd: "/ok", runs: ["codex"], state: "ended", exit_code: 0 },
    ]);
    expect(Object.fromEntries(sessions.slice(2).map((s) => [s.id, [s.state, s.reason]]))).toEqual(Object.fromEntries(damaged.map(([id, reason]) => [id, ["damaged", reason]])));
    // what a damaged journal still says is kept: here its start
    expect(sessions.find((s) => s.id === "0zz00000b1")).toEqual({ id: "0zz00000b1", started: at, cwd: "/w", runs: [], state: "damaged", exit_code: 0, reason: "line 2 is not JSON (cut off or overwritten)" });
    expect(sessions.find((s) => s.id === "0zz00000a1")).toEqual({ id: "0zz00000a1", started: null, cwd: "", runs: [], state: "damaged", exit_code: null, reason: "journal.jsonl is empty" });

    const table = await sandbox.run(["sessions"]);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split("\n");
    expect(rows[0]).toBe("SESSION     STARTED               FOLDER  RUNS   STATE");
    expect(rows[1]).toBe("0zz0000zz2  2026-11-30 12:00 UTC  /torn   codex  interrupted");
    expect(rows[2]).toBe("0zz0000zz1  2026-11-30 12:00 UTC  /ok     codex  ended");
    expect(rows).toContain("0zz00000a1  -                     -       -      damaged: journal.jsonl is empty");
    expect(rows).toContain('0zz00000a6  -                     -       -      damaged: line 1 has no time: "at" is null');
    expect(rows).toContain("0zz00000b3  -                     -       -      damaged: journal.jsonl is a folder, not a file");
    expect(rows).toHaveLength(3 + damaged.length);
  });

  it.each([
    ["0zz00000a1", "session 0zz00000a1 · damaged: journal.jsonl is empty\n"],
    ["0zz00000a6", 'session 0zz00000a6 · damaged: line 1 has no time: "at" is null\n'],
    ["0zz00000b3", "session 0zz00000b3 · damaged: journal.jsonl is a folder, not a file\n"],
    ["0zz00000b4", "session 0zz00000b4 · damaged: journal.jsonl is not a regular file\n"],
    ["0zz00000b1", "session 0zz00000b1 · started 2026-11-30 12:00 UTC · /w · damaged: line 2 is not JSON (cut off or overwritten) (exit 0)\n12:00  session ended, exit 0\n"],
  ])("is shown by sessions show %s with what is wrong", async (id, shown) => {
    expect(await sandbox.run(["sessions", "show", id])).toEqual({ code: 0, stdout: shown, stderr: "" });
  });

  it("is shown as the events it still holds by sessions show --json, and the damage is said on stderr", async () => {
    const shown = await sandbox.run(["sessions", "show", "0zz00000a7", "--json"]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual([{ at, type: "session-start", cwd: "/w", pid: 999999999 }]);
    expect(shown.stderr).toBe('uuldana: session 0zz00000a7\'s journal is damaged: line 2 has no time: "at" is "yesterday"\n');
  });

  it("has no agent sessions stop could end, and it says so", async () => {
    expect(await sandbox.run(["sessions", "stop", "0zz00000a1"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "uuldana: session 0zz00000a1's journal is damaged (journal.jsonl is empty), so it does not say which agent to stop [E_SESSION_NOT_ORPHANED]\n",
    });
  });
});

describe("a sessions folder that is not a folder", () => {
  it.each([
    ["a file", () => writeFileSync(join(sandbox.data, "sessions"), "x"), (f: string) => `${f} is a file, not a folder`, (f: string) => `move it away (mv "${f}" "${f}.old"); uuldana makes the folder again at the next run`],
    [
      "a symlink to a file",
      () => {
        writeFileSync(join(sandbox.dir, "elsewhere"), "x");
        symlinkSync(join(sandbox.dir, "elsewhere"), join(sandbox.data, "sessions"));
      },
      (f: string) => `${f} is a symlink to a file (${join(sandbox.dir, "elsewhere")}), not to a folder`,
      (f: string) => `move it away (mv "${f}" "${f}.old"); uuldana makes the folder again at the next run`,
    ],
    [
      "a symlink to nothing",
      () => symlinkSync(join(sandbox.dir, "gone"), join(sandbox.data, "sessions")),
      () => `${join(sandbox.data, "sessions")} is a symlink to ${join(sandbox.dir, "gone")}, which does not exist`,
      (f: string) => `remove the symlink (rm "${f}") or make the folder it names; uuldana keeps its sessions there`,
    ],
  ])("is %s: every command that reads or writes sessions names it and the fix, exit 2", async (_, make, is, hint) => {
    installAgents(sandbox);
    make();
    const folder = join(sandbox.data, "sessions");
    const message = `${is(folder)}: uuldana keeps its sessions in this folder`;
    const stderr = `uuldana: ${message} [E_SESSIONS_FOLDER_UNUSABLE]\nhint: ${hint(folder)}\n`;
    for (const args of [["sessions"], ["sessions", "show", "0zz00000a1"], ["sessions", "stop", "0zz00000a1"], ["run"], ["resume"]]) {
      expect({ args, ...(await sandbox.run(args)) }).toEqual({ args, code: 2, stdout: "", stderr });
    }
    // with --json, the same error is also the output
    const error = { code: "E_SESSIONS_FOLDER_UNUSABLE", message, details: [], hint: hint(folder), cause: [] };
    expect(await sandbox.run(["sessions", "--json"])).toEqual({ code: 2, stdout: JSON.stringify({ error }, null, 2) + "\n", stderr });
  });
});

describe("which agent a session left running", () => {
  // a process of its own group, as an agent in its pseudo-terminal is, that SIGHUP ends
  function agentStandIn(): number {
    const child = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
    child.unref();
    children.push(child.pid!);
    return child.pid!;
  }
  const runStart = (pid: number, pidStart: string | undefined): string => line({ type: "run-start", entry: "codex", level: "ask", pid, ...(pidStart === undefined ? {} : { pid_start: pidStart }) });

  it("is stopped only when it is the very process the journal recorded: a reused pid is left alone", async () => {
    const pid = agentStandIn();
    await waitFor(() => processStarted(pid) !== undefined, "the stand-in to start");
    journal("0zz0000ab1", start + runStart(pid, "0-0-0:1"));
    journal("0zz0000ab2", start + runStart(pid, undefined));
    const sessions = JSON.parse((await sandbox.run(["sessions", "--json"])).stdout) as { id: string; state: string }[];
    expect(sessions.map((s) => [s.id, s.state])).toEqual([["0zz0000ab2", "interrupted"], ["0zz0000ab1", "interrupted"]]);
    for (const id of ["0zz0000ab1", "0zz0000ab2"]) {
      expect(await sandbox.run(["sessions", "stop", id])).toEqual({ code: 1, stdout: "", stderr: `uuldana: session ${id} was interrupted and none of its agents is running: there is nothing to stop [E_SESSION_NOT_ORPHANED]\n` });
    }
    expect(isAlive(pid)).toBe(true);

    // its uuldana was killed while writing: the journal's last line is torn
    journal("0zz0000ab3", start + runStart(pid, processStarted(pid)) + '{"at":"2026-11-30T12:00:09.000Z","type":"us');
    expect(JSON.parse((await sandbox.run(["sessions", "--json"])).stdout)[0]).toMatchObject({ id: "0zz0000ab3", state: "orphaned", agent_pid: pid });
    expect(await sandbox.run(["sessions", "stop", "0zz0000ab3"])).toEqual({ code: 0, stdout: `stopped codex (pid ${pid}), left running by session 0zz0000ab3 when its uuldana was gone, with SIGHUP\n`, stderr: "" });
    await waitFor(() => !isAlive(pid), "the stand-in to end");
    // the torn part-line is gone and the stop's events stand on lines of their own: the session reads whole
    expect(JSON.parse((await sandbox.run(["sessions", "--json"])).stdout)[0]).toMatchObject({ id: "0zz0000ab3", state: "ended" });
  });

  it("is not stopped while its uuldana runs: sessions stop says where to stop it", async () => {
    const pid = agentStandIn();
    await waitFor(() => processStarted(pid) !== undefined, "the stand-in to start");
    journal("0zz0000ac1", line({ type: "session-start", cwd: "/w", pid: process.pid, pid_start: processStarted(process.pid) }) + runStart(pid, processStarted(pid)));
    expect(JSON.parse((await sandbox.run(["sessions", "--json"])).stdout)[0]).toMatchObject({ id: "0zz0000ac1", state: "running" });
    expect(await sandbox.run(["sessions", "stop", "0zz0000ac1"])).toEqual({
      code: 1,
      stdout: "",
      stderr: `uuldana: session 0zz0000ac1 is still running in uuldana (pid ${process.pid}): stop it there, or send that uuldana SIGTERM (kill ${process.pid}) and it stops its agent itself [E_SESSION_NOT_ORPHANED]\n`,
    });
    expect(await sandbox.run(["sessions", "stop", "nosuch"])).toEqual({ code: 2, stdout: "", stderr: 'uuldana: no session "nosuch" [E_USAGE]\nhint: run "uuldana sessions" to see the sessions\n' });
    expect(isAlive(pid)).toBe(true);
  });
});

function sessionCount(): number {
  return existsSync(join(sandbox.data, "sessions")) ? readdirSync(join(sandbox.data, "sessions")).length : 0;
}

describe("uuldana run killed with SIGKILL in its first second", () => {
  it("leaves sessions that every sessions command lists and shows (20 trials at random moments)", async () => {
    installAgents(sandbox);
    const trials = 20;
    const codes: number[] = [];
    for (let trial = 0; trial < trials; trial++) {
      const before = sessionCount();
      const child = spawn(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, stdio: "ignore" });
      const exited = new Promise((resolve) => child.on("exit", resolve));
      // every other kill comes once the session's folder is there (a loaded machine may take a second to get so
      // far), the others at any moment of the first second
      if (trial % 2 === 1) await waitFor(() => sessionCount() > before, "the session's folder");
      await new Promise((resolve) => setTimeout(resolve, Math.random() * (trial % 2 === 1 ? 100 : 1000)));
      child.kill("SIGKILL");
      await exited;
      codes.push((await sandbox.run(["sessions"])).code!);
    }
    const listed = await sandbox.run(["sessions", "--json"]);
    const sessions = JSON.parse(listed.stdout) as { id: string; state: string; reason?: string }[];
    for (const { id } of sessions) codes.push((await sandbox.run(["sessions", "show", id])).code!);
    const states = sessions.map((s) => (s.reason ? `${s.state}: ${s.reason}` : s.state));
    const count = (state: string): number => states.filter((s) => s === state).length;
    console.info(`${trials} kills: ${sessions.length} sessions, ${count("interrupted")} interrupted, ${count("damaged: journal.jsonl is empty")} empty, ${states.length - count("interrupted")} other`);
    expect(codes.every((code) => code === 0)).toBe(true);
    // the session's start is written as the journal is made: an empty journal would need a kill between the two
    expect(count("damaged: journal.jsonl is empty")).toBe(0);
    expect(listed.code).toBe(0);
    // a kill before the journal was opened leaves no session at all, after it the session's start is there
    expect(sessions.length).toBeLessThanOrEqual(trials);
    // each kill that came once the session's folder was there left a session
    expect(sessions.length).toBeGreaterThanOrEqual(trials / 2);
    expect(states.every((state) => state === "interrupted" || state === "damaged: there is no journal.jsonl")).toBe(true);
  }, 600_000);
});

describe("resuming a session", () => {
  it("refuses one whose journal is damaged, naming why", async () => {
    installAgents(sandbox);
    journal("0zz00000c1", start + "garbage\n" + line({ type: "session-end", exit_code: 0 }));
    expect(await sandbox.run(["resume", "0zz00000c1"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'uuldana: session 0zz00000c1\'s journal is damaged (line 2 is not JSON (cut off or overwritten)), so it cannot be resumed [E_SESSION_NOT_RESUMABLE]\nhint: "uuldana sessions show 0zz00000c1" shows what can be read of it\n',
    });
  });

  it("refuses one still running in another uuldana, and resume without an id passes it by", async () => {
    installAgents(sandbox);
    journal("0zz00000c2", line({ type: "session-start", cwd: sandbox.project, pid: process.pid, pid_start: processStarted(process.pid) }));
    expect(await sandbox.run(["resume", "0zz00000c2"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: session 0zz00000c2 is still running in uuldana (pid ${process.pid}) [E_SESSION_NOT_RESUMABLE]\nhint: continue it in the terminal where it runs, or end it there first\n`,
    });
    expect(await sandbox.run(["resume"])).toEqual({ code: 2, stdout: "", stderr: 'uuldana: no session to resume [E_NOTHING_TO_RESUME]\nhint: run "uuldana sessions" to see the sessions\n' });
  });

  it("continues one whose last line a crash tore: the resume starts on a line of its own, and the session reads whole", async () => {
    installAgents(sandbox, ["fast"]);
    journal("0zz00000c3", start.replace("/w", sandbox.project) + '{"at":"2026-11-30T12:00:02.000Z","ty');
    const resumed = await sandbox.run(["resume", "0zz00000c3"]);
    expect(resumed.code).toBe(4);
    const [listed] = JSON.parse((await sandbox.run(["sessions", "--json"])).stdout);
    expect(listed).toMatchObject({ id: "0zz00000c3", state: "ended", runs: ["fast"], exit_code: 4 });
  });
});

describe("a session whose saved conversation is not a file", () => {
  it("resumes without it instead of waiting on a named pipe", async () => {
    installAgents(sandbox, ["fast"]);
    journal("0zz00000d1", start.replace("/w", sandbox.project) + line({ type: "conversation", entry: "fast", name: "Stand-in fast", file: "conversation-1.txt" }) + line({ type: "session-end", exit_code: 4 }));
    expect(spawnSync("mkfifo", [join(sandbox.data, "sessions", "0zz00000d1", "conversation-1.txt")]).status).toBe(0);
    const resumed = await sandbox.run(["resume", "0zz00000d1"]);
    expect(resumed.code).toBe(4);
  });
});

describe("a session that ends on a usage error", () => {
  it("is ended in its journal, not left interrupted", async () => {
    installAgents(sandbox);
    const run = await sandbox.run(["run", "--provider", "nosuch"]);
    expect(run).toEqual({ code: 2, stdout: "", stderr: 'uuldana: --provider nosuch: no entry has this key [E_USAGE]\n  entries: line\nhint: run "uuldana providers list --all" to see every entry and provider\n' });
    const [listed] = JSON.parse((await sandbox.run(["sessions", "--json"])).stdout);
    expect(listed).toMatchObject({ state: "ended", runs: [], exit_code: 2 });
  });
});
