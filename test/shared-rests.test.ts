import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { readCooldowns, recordRests } from "../core/session/cooldowns.js";
import { formatInstant } from "../core/session/eligibility.js";
import { readQuota } from "../core/session/quota-store.js";
import { SharedRests, type Clock } from "../core/session/shared-rests.js";
import { loadConfig } from "../core/config/config.js";
import { parseSharedUrl } from "../core/config/shared-url.js";
import { installAgents } from "./agents.js";
import { bin, fixtures, makeSandbox, runFile, sessionJournals, waitFor, type Sandbox } from "./helpers.js";
import { Proxy, RedisServer, SERVER } from "./redis-server.js";
import { TestTerminal } from "./terminal.js";

// Rests shared across machines through a real redis-server: two data dirs stand for two machines. The store is never
// on the failover path, and every fault (killed, stopped, restarted empty, a wrong password, cut off, a hostile value)
// leaves the sessions on their local tables with one notice each.

let server: RedisServer;
const sandboxes: Sandbox[] = [];
const terminals: TestTerminal[] = [];
const proxies: Proxy[] = [];

beforeAll(async () => {
  if (!SERVER) throw new Error("redis-server (or valkey-server) is needed: apt-get install redis-server");
  server = await RedisServer.start("test-store-secret");
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  for (const proxy of proxies.splice(0)) await proxy.stop();
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
  server.signal("SIGCONT");
  if (!(await server.command(["PING"]).catch(() => undefined))) await server.begin();
  await server.command(["FLUSHALL"]);
});

// One machine: a data dir of its own, the two stand-in agents, and the store's URL in its config.
function machine(url = server.url(), extra: Record<string, unknown> = {}): Sandbox {
  const sandbox = makeSandbox();
  sandboxes.push(sandbox);
  installAgents(sandbox, ["limit", "line"]);
  sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, shared_rests: url, ...extra });
  return sandbox;
}

function open(sandbox: Sandbox, env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "answer", ...env }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

// The user meets the limit agent's wall; the session moves on to the line agent.
async function meetTheWall(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("limit agent ready");
  terminal.type("please add a test for the lexer\r");
  await terminal.waitFor("line agent ready", 20_000);
}

async function storedRest(key = "uuldana:rest:limit"): Promise<Record<string, unknown> | undefined> {
  const value = await server.command(["GET", key]).catch(() => undefined);
  return typeof value === "string" ? (JSON.parse(value) as Record<string, unknown>) : undefined;
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

const notice = (reason: string): string =>
  `uuldana: the shared rest store redis://:***@127.0.0.1:${server.port} ${reason}; this session goes on with its local cooldown table and tries the store again in the background`;

describe("rests shared across machines", () => {
  it("a rest written on one machine is in the other's cooldowns and moves its running session at its next turn boundary", async () => {
    const [a, b, c] = [machine(), machine(), machine()];
    const second = open(b);
    await second.waitFor("limit agent ready");
    const first = open(a);
    await meetTheWall(first);
    // the other machine's session moves on without meeting the wall itself
    await second.waitFor("line agent ready", 20_000);
    expect(second.raw).toContain("uuldana: limit was rested by another uuldana session (weekly limit)");
    const stored = (await storedRest())!;
    expect(stored).toMatchObject({ v: 1, source: "inferred", kind: "weekly", machine: hostname() });
    // the store's own expiry ends the key with the rest
    expect(await server.command(["PEXPIRETIME", "uuldana:rest:limit"])).toBe(new Date(String(stored.until)).getTime());
    // a third machine with no session running reads it from the store
    const listed = await c.run(["cooldowns", "--json"]);
    expect(listed.stderr).toBe("");
    expect(JSON.parse(listed.stdout)).toEqual([
      { entry: "limit", account: "limit", until: stored.until, since: stored.since, source: "inferred", kind: "weekly", text: stored.text, machine: hostname() },
    ]);
    const journal = sessionJournals(b.data)[0]!;
    expect(journal.find((event) => event.type === "limit")).toMatchObject({ reason: "shared-rest", after: "turn boundary" });
    expect(journal.find((event) => event.type === "shared-rest-heard")).toMatchObject({ account: "limit", until: stored.until, machine: hostname() });
    second.type("/exit\r");
    first.type("/exit\r");
    await Promise.all([first.exited, second.exited]);
  });

  it("shares by account: two entries of one account on two machines rest together", async () => {
    const a = machine(server.url(), { providers: [{ id: "limit", account: "team-pool" }, "line"] });
    const b = machine(server.url(), { providers: [{ id: "line", name: "other", account: "team-pool" }, "limit"] });
    const first = open(a);
    await meetTheWall(first);
    await waitFor(() => readFileSync(join(a.data, "cooldowns.json"), "utf8").includes("team-pool"), "the rest in a's table");
    expect(Object.keys(JSON.parse(readFileSync(join(a.data, "cooldowns.json"), "utf8")).entries)).toEqual(["team-pool"]);
    expect(await storedRest("uuldana:rest:team-pool")).toMatchObject({ kind: "weekly" });
    const listed = await b.run(["cooldowns"]);
    expect(listed.stdout.split("\n")[1]).toMatch(/^other \(team-pool\) +\S/);
    const providers = JSON.parse((await b.run(["providers", "list", "--json"])).stdout) as { entry: string; account: string; resting_until: string | null }[];
    expect(providers.map((row) => [row.entry, row.account, row.resting_until !== null])).toEqual([
      ["other", "team-pool", true],
      ["limit", "limit", false],
    ]);
    const journal = sessionJournals(a.data)[0]!;
    expect(journal.find((event) => event.type === "cooldown")).toMatchObject({ entry: "limit", account: "team-pool" });
    // clearing an entry clears its account's rows
    expect((await b.run(["cooldowns", "clear", "other"])).stdout).toBe("Cleared: team-pool.\n");
    first.type("/exit\r");
    await first.exited;
  });
});

describe("readings shared across machines", () => {
  it("a reading another machine shares rotates a running session of the same account before the wall, and is kept here", async () => {
    const b = machine(server.url(), { rotate_at_percent_left: 10 });
    const terminal = open(b);
    await terminal.waitFor("limit agent ready");
    const resets = new Date(Date.now() + 3_600_000).toISOString();
    const value = JSON.stringify({ v: 1, account: "limit", at: new Date().toISOString(), source: "statusline", windows: [{ name: "five_hour", used_percent: 95, resets_at: resets, window_minutes: 300 }], machine: "machine-a" });
    await server.command(["SET", "uuldana:reading:limit", value]);
    await server.command(["PUBLISH", "uuldana:changes", `uuldana:reading:limit\n${value}`]);
    await terminal.waitFor("line agent ready", 20_000);
    expect(terminal.raw).toContain(`uuldana: limit: its five_hour window had 5% left, at or below rotate_at_percent_left 10, so it was rotated before its allowance ran out; it rests until ${formatInstant(new Date(resets))}`);
    expect(readQuota(b.data, "limit")).toMatchObject({ entry: "limit", source: "statusline", windows: [{ name: "five_hour", usedPercent: 95 }] });
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("a reading shared goes to the store under its account, expiring at its latest reset", async () => {
    const a = machine();
    const options = { store: parseSharedUrl(server.url(), "test"), dataDir: a.data, machine: "machine-a", entriesOf: () => [], notice: () => undefined };
    const shared = await SharedRests.open(options, 1000);
    const resetsAt = new Date(Date.now() + 7 * 3_600_000);
    shared.shareReading({ account: "team", at: new Date(), source: "rollout", windows: [{ name: "primary", usedPercent: 40, resetsAt }] });
    await waitFor(() => shared.up, "the store to take the reading");
    const stored = JSON.parse(String(await server.command(["GET", "uuldana:reading:team"])));
    expect(stored).toMatchObject({ v: 1, account: "team", source: "rollout", machine: "machine-a", windows: [{ name: "primary", used_percent: 40, resets_at: resetsAt.toISOString() }] });
    expect(await server.command(["PEXPIRETIME", "uuldana:reading:team"])).toBe(resetsAt.getTime());
    shared.close();
  });
});

describe("faults of the store", () => {
  it("killed mid-session, then restarted empty: the session fails over on its local table, says so once, and the rest reaches the store when it is back", async () => {
    const a = machine();
    const terminal = open(a);
    await terminal.waitFor("limit agent ready");
    await server.kill();
    await meetTheWall(terminal);
    expect(JSON.parse(readFileSync(join(a.data, "cooldowns.json"), "utf8")).entries.limit.kind).toBe("weekly");
    const said = await backThenExit(terminal);
    expect(said).toMatch(/uuldana: the shared rest store redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ (closed the connection|refuses connections \(ECONNREFUSED\)); this session goes on/);
    const journal = sessionJournals(a.data)[0]!;
    expect(journal.filter((event) => event.type === "shared-store").map((event) => event.state)).toEqual(["away", "back"]);
  });

  it("down at start: the session starts on its local table, says so once, and its rest reaches the store once it is up", async () => {
    const a = machine();
    await server.kill();
    const terminal = open(a);
    await meetTheWall(terminal);
    expect(JSON.parse(readFileSync(join(a.data, "cooldowns.json"), "utf8")).entries.limit.kind).toBe("weekly");
    const said = await backThenExit(terminal);
    expect(said).toContain(notice("refuses connections (ECONNREFUSED)"));
    const journal = sessionJournals(a.data)[0]!;
    expect(journal.filter((event) => event.type === "shared-store").map((event) => event.state)).toEqual(["away", "back"]);
  });

  it("restarted empty: the rests it held before are written to it again from the local table", async () => {
    const a = machine();
    const terminal = open(a);
    await meetTheWall(terminal);
    await pollStore();
    const before = (await storedRest())!;
    await server.kill();
    await server.begin();
    expect(await storedRest()).toBeUndefined();
    await pollStore();
    expect(await storedRest()).toEqual(before);
    terminal.type("/exit\r");
    await terminal.exited;
    expect(count(terminal.raw, "uuldana: the shared rest store")).toBe(1);
    const journal = sessionJournals(a.data)[0]!;
    expect(journal.filter((event) => event.type === "shared-store").map((event) => event.state)).toEqual(["away", "back"]);
  });

  it("stopped (SIGSTOP): a failover waits for it no longer than its bound, and the rest reaches it once it runs again", async () => {
    const a = machine();
    const terminal = open(a);
    await terminal.waitFor("limit agent ready");
    server.signal("SIGSTOP");
    await meetTheWall(terminal);
    server.signal("SIGCONT");
    await pollStore();
    terminal.type("/exit\r");
    await terminal.exited;
    const said = terminal.raw.replace(/\r/g, "");
    expect(count(said, "uuldana: the shared rest store")).toBe(1);
    expect(said).toMatch(/uuldana: the shared rest store redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ (did not take a rest within 250 ms|does not answer); this session goes on/);
  });

  it("cut off by a partition and back: the session runs on, and the rest reaches the store through the restored link", async () => {
    const proxy = await Proxy.start(server.port);
    proxies.push(proxy);
    const a = machine(server.url(server.password, proxy.port));
    const terminal = open(a);
    await terminal.waitFor("limit agent ready");
    proxy.cut();
    await meetTheWall(terminal);
    proxy.restore();
    await pollStore();
    terminal.type("/exit\r");
    await terminal.exited;
    expect(count(terminal.raw, "uuldana: the shared rest store")).toBe(1);
  });

  it("refusing the password: sessions and cooldowns run on the local table, say so once, and the password is written nowhere", async () => {
    const a = machine("redis://127.0.0.1:1");
    const wrong = server.url("not-the-password");
    const terminal = open(a, { UULDANA_SHARED_RESTS: wrong });
    await meetTheWall(terminal);
    terminal.type("/exit\r");
    await terminal.exited;
    const said = terminal.raw.replace(/\r/g, "");
    expect(count(said, "uuldana: the shared rest store")).toBe(1);
    expect(said).toContain(notice("refused the password (WRONGPASS)"));
    const listed = await a.run(["cooldowns"], { env: { UULDANA_SHARED_RESTS: wrong } });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(`uuldana: the shared rest store redis://:***@127.0.0.1:${server.port} refused the password (WRONGPASS); the rests shown are this machine's alone\n`);
    expect(listed.stdout.split("\n")[1]).toMatch(/^limit /);
    expect(await storedRest()).toBeUndefined();
    for (const file of filesUnder(a.data)) expect(readFileSync(file, "utf8")).not.toContain("not-the-password");
  });

  it("a malformed or hostile value is read as no rest, with a notice naming the key", async () => {
    const a = machine();
    const far = new Date(Date.UTC(9999, 0, 1)).toISOString();
    await server.command(["SET", "uuldana:rest:limit", "{not json"]);
    await server.command(["SET", "uuldana:rest:line", JSON.stringify({ v: 1, until: far, since: null, source: "inferred", kind: "weekly", text: null, model: null, machine: "x" })]);
    await server.command(["SET", "uuldana:rest:big", "x".repeat(100_000)]);
    await server.command(["SET", "uuldana:rest:typed", JSON.stringify({ v: 1, until: 5, source: ["inferred"] })]);
    await server.command(["HSET", "uuldana:rest:hash", "until", "tomorrow"]);
    const listed = await a.run(["cooldowns"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe("No entry is resting.\n");
    expect(listed.stderr.split("\n").filter(Boolean).sort()).toEqual(
      [
        `uuldana: the shared rest store holds uuldana:rest:big, which is not a rest or reading uuldana wrote (it is larger than 8192 bytes); it is read as none`,
        `uuldana: the shared rest store holds uuldana:rest:limit, which is not a rest or reading uuldana wrote (it is not JSON); it is read as none`,
        `uuldana: the shared rest store holds uuldana:rest:line, which is not a rest or reading uuldana wrote (its "until" is more than 400 days away (${far})); it is read as none`,
        `uuldana: the shared rest store holds uuldana:rest:typed, which is not a rest or reading uuldana wrote (its "until" is not a time); it is read as none`,
      ].sort(),
    );
    // a session reading them runs on, says each bad key once, and writes its own rest over the hostile one
    const terminal = open(a);
    await meetTheWall(terminal);
    await pollStore();
    expect(await storedRest()).toMatchObject({ v: 1, kind: "weekly", machine: hostname() });
    terminal.type("/exit\r");
    await terminal.exited;
    const said = terminal.raw.replace(/\r/g, "");
    for (const key of ["big", "limit", "line", "typed"]) expect(count(said, `uuldana: the shared rest store holds uuldana:rest:${key}, which`)).toBe(1);
    expect(count(said, "uuldana: the shared rest store redis://")).toBe(0);
  });

  it("a failover waits for the store at most 250 ms, on an injected clock, then goes on and retries in the background", async () => {
    const a = machine();
    const clock = new ManualClock();
    const said: string[] = [];
    const options = { store: parseSharedUrl(server.url(), "test"), dataDir: a.data, machine: "machine-a", entriesOf: () => [], notice: (line: string) => void said.push(line), clock };
    const shared = await SharedRests.open(options, 250);
    expect(shared.up).toBe(true);
    server.signal("SIGSTOP");
    const row = { until: new Date(Date.now() + 3_600_000), since: new Date(), source: "inferred" as const, kind: "weekly", text: "limit reached" };
    await recordRests(a.data, new Map([["limit", row]]));
    let done: boolean | undefined;
    void shared.shareRest("limit", row).then((taken) => (done = taken));
    await clock.advance(249);
    expect(done).toBeUndefined();
    await clock.advance(1);
    expect(done).toBe(false);
    expect(said).toEqual([notice("did not take a rest within 250 ms")]);
    // the local table holds the rest meanwhile; the store gets it once it answers again
    expect((await readCooldowns(a.data)).entries.get("limit")?.until).toEqual(row.until);
    server.signal("SIGCONT");
    await clock.advance(250);
    await waitFor(() => shared.up, "the store to take the rest");
    expect(await storedRest()).toMatchObject({ machine: "machine-a", text: "limit reached" });
    expect(said).toHaveLength(1);
    shared.close();
  });
});

describe("the setting", () => {
  it("loads no client library without shared_rests, and loads it with", async () => {
    const a = machine();
    const list = join(a.dir, "loaded.txt");
    const env = { ...a.env, LOADED_MODULES_FILE: list };
    const redisModules = (): number => readFileSync(list, "utf8").split("\n").filter((path) => path.includes("@redis")).length;
    a.write("config/config.json", { providers: ["limit", "line"], auto_detect: false });
    for (const args of [["cooldowns"], ["providers", "list"]]) {
      await runFile(process.execPath, ["--import", join(fixtures, "loaded-modules.mjs"), bin, ...args], { cwd: a.project, env });
      expect(redisModules()).toBe(0);
    }
    // a whole session, failover included, loads none either (it does load the terminal library, so the list is its)
    rmSync(list);
    const session = new TestTerminal(process.execPath, ["--import", join(fixtures, "loaded-modules.mjs"), bin, "run"], { cwd: a.project, env: { ...env, TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
    terminals.push(session);
    await meetTheWall(session);
    session.type("/exit\r");
    await session.exited;
    expect(readFileSync(list, "utf8")).toContain("node-pty");
    expect(redisModules()).toBe(0);
    await runFile(process.execPath, ["--import", join(fixtures, "loaded-modules.mjs"), bin, "cooldowns"], { cwd: a.project, env: { ...env, UULDANA_SHARED_RESTS: server.url() } });
    expect(redisModules()).toBeGreaterThan(0);
  });

  it("is the user's alone: a project's config naming one is reported and ignored; a URL that is none is a clear error", async () => {
    const a = machine();
    a.write("config/config.json", { providers: ["limit", "line"], auto_detect: false });
    const file = a.write("project/.uuldanarc.json", { shared_rests: server.url() });
    const config = await loadConfig({ configDir: a.config, cwd: a.project, env: a.env });
    expect(config.sharedRests).toBeUndefined();
    expect(config.notes).toEqual([`${file}: "shared_rests" can only be set in your own config.json; ignored`]);
    const bad = await a.run(["cooldowns"], { env: { UULDANA_SHARED_RESTS: "http://user:hunter2-secret@example.org" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("UULDANA_SHARED_RESTS: shared_rests is not a redis:// or rediss:// URL with a host");
    expect(bad.stderr).not.toContain("hunter2-secret");
    // the file's value is never repeated either: it may hold the password
    a.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, shared_rests: "http://user:hunter2-secret@example.org" });
    const fromFile = await a.run(["providers", "list"]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toBe(
      `uuldana: ${join(a.config, "config.json")}: shared_rests is not a redis:// or rediss:// URL with a host [E_CONFIG_INVALID]\nhint: give it as redis://[USER]:PASSWORD@HOST:PORT[/DB] (rediss:// for TLS), or remove it to keep rests on this machine only\n`,
    );
  });
});

// The server started again, the session's rest found in it, the session ended: what it said, having said once that the
// store was away.
async function backThenExit(terminal: TestTerminal): Promise<string> {
  await server.begin();
  await pollStore();
  terminal.type("/exit\r");
  await terminal.exited;
  const said = terminal.raw.replace(/\r/g, "");
  expect(count(said, "uuldana: the shared rest store")).toBe(1);
  return said;
}

// The rest of the limit entry in the store, once it is there.
async function pollStore(): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    if (await storedRest()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the rest never reached the store");
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" }).map((name) => join(folder, name)).filter((file) => statSync(file).isFile());
}

// A clock the test moves: timers fire when it passes their time.
class ManualClock implements Clock {
  private at = Date.now();
  private readonly timers = new Map<number, { when: number; run: () => void }>();
  private next = 0;

  now(): number {
    return this.at;
  }

  setTimeout(run: () => void, ms: number): unknown {
    const id = ++this.next;
    this.timers.set(id, { when: this.at + ms, run });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  async advance(ms: number): Promise<void> {
    this.at += ms;
    for (const [id, timer] of [...this.timers].sort(([, x], [, y]) => x.when - y.when)) {
      if (timer.when > this.at || !this.timers.has(id)) continue;
      this.timers.delete(id);
      timer.run();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
