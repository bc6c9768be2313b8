import type { SharedStoreUrl } from "../config/shared-url.js";
import { readCooldowns, recordLater, type Cooldown } from "./cooldowns.js";
import { recordQuota, type QuotaReading } from "./quota-store.js";
import { CHANNEL, latestEnd, READING_PREFIX, readingValue, readReading, readRest, REST_PREFIX, restValue, type Read, type SharedReading } from "./shared-values.js";

// The shared rest store (shared_rests): a Redis or Valkey server through which every uuldana using it learns the
// rests and latest quota readings of the accounts it runs, whatever machine met the wall.
//
// The local cooldown table stays each machine's record: a rest is written there first, then to the store as a key
// that expires by itself at the rest's end (SET … PXAT), and published on one channel in the same server-side
// script, so every connected uuldana hears it at once and writes it into its own table, where its running sessions
// see it as a rest another session wrote (rest-watch.ts). On (re)connecting, the store's rests are read and merged
// into the table (the later end wins, per account and model), and the table's rests the store lacks go to it: what
// was written while the store was away reaches it when it is back.
//
// The store is never on the failover path: a rest waits for it at most 250 ms; a store that is away (refused,
// stopped, hanging, cut off, refusing the password) is said once per outage and tried again in the background,
// the session running on its local table meanwhile. The client library is imported only when a store is configured.

export interface Clock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SharedRestsOptions {
  store: SharedStoreUrl;
  dataDir: string;
  // this machine's name, written with each rest and reading
  machine: string;
  // the entry keys of each account this uuldana runs, for the readings heard (kept per entry on this machine)
  entriesOf: (account: string) => string[];
  // a line to say to the user, once per outage and once per bad value
  notice: (line: string) => void;
  // what the user is told uuldana does while the store is away (a session goes on with its local table by default)
  meanwhile?: string;
  // a fact for the journal (the store going away and coming back, a rest shared or heard)
  record?: (type: string, fields: Record<string, unknown>) => void;
  clock?: Clock;
  // hear the store's changes as they are made (a session); a command that only reads them once does not
  listen?: boolean;
}

// How long a rest waits for the store at a failover before the session goes on without it.
const FAILOVER_WAIT_MS = 250;
// How long anything else waits for an answer before the store counts as away.
const ANSWER_MS = 2000;
// How often a store that is up is asked whether it still answers (a stopped or cut-off one says nothing).
const CHECK_MS = 1500;
// The waits between tries while the store is away.
const RETRY_MS = [250, 500, 1000, 2000, 3000];

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

// Sets a key to a value expiring at ARGV[2] (ms) and publishes it, unless the key holds a value uuldana wrote that
// ends later (the later end wins); a value that is not uuldana's, or ends absurdly late (past ARGV[4]), is replaced.
const SET_LATER = `
local t = redis.call('PEXPIRETIME', KEYS[1])
if t > tonumber(ARGV[2]) and t <= tonumber(ARGV[4]) then
  local got = redis.pcall('GET', KEYS[1])
  if type(got) == 'string' then
    local ok, old = pcall(cjson.decode, got)
    if ok and type(old) == 'table' and old.v == 1 then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('PUBLISH', ARGV[3], KEYS[1] .. '\\n' .. ARGV[1])
return 1`;

type Client = {
  connect(): Promise<unknown>;
  destroy(): void;
  duplicate(): Client;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  sendCommand(args: string[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
};

export class SharedRests {
  private readonly clock: Clock;
  private client: Client | undefined;
  private subscriber: Client | undefined;
  private state: "connecting" | "up" | "away" | "closed" = "connecting";
  // each connection's number: what an older one reports is not this one's
  private generation = 0;
  private connecting: Promise<boolean> | undefined;
  private timer: unknown;
  private tries = 0;
  // said once per outage
  private told = false;
  // keys whose bad value was said already
  private readonly badSaid = new Set<string>();
  // who wants the readings of an account taken on other machines
  private readonly listeners = new Set<{ account: string; heard: (reading: SharedReading) => void }>();
  // rests and readings not yet taken by the store, by key
  private readonly outbox = new Map<string, { value: string; until: number }>();

  private constructor(private readonly options: SharedRestsOptions) {
    this.clock = options.clock ?? realClock;
  }

  // Connects and merges the store's rests into the local table, waiting for that at most waitMs; the store keeps
  // being tried in the background when it is away.
  static async open(options: SharedRestsOptions, waitMs: number): Promise<SharedRests> {
    // loading the library is uuldana's own time, not the store's
    await loadClient().catch(() => undefined);
    const shared = new SharedRests(options);
    await shared.within(shared.connect(), waitMs, "did not answer in time");
    return shared;
  }

  // Whether the store took everything so far.
  get up(): boolean {
    return this.state === "up" && this.outbox.size === 0;
  }

  // Shares a rest written to the local table (key: its account, or account@model). Waits at most 250 ms: a store
  // that has not taken it by then counts as away (said once), and the rest goes to it when it is back.
  async shareRest(key: string, row: Cooldown): Promise<boolean> {
    if (this.state === "closed" || row.until.getTime() <= this.clock.now()) return false;
    this.outbox.set(REST_PREFIX + key, { value: restValue(row, this.options.machine), until: row.until.getTime() });
    return this.within(this.flush(), FAILOVER_WAIT_MS, `did not take a rest within ${FAILOVER_WAIT_MS} ms`);
  }

  // Shares an account's latest quota reading; never waited for.
  shareReading(reading: Omit<SharedReading, "machine">): void {
    if (this.state === "closed") return;
    const now = this.clock.now();
    const resets = reading.windows.map((one) => one.resetsAt?.getTime() ?? 0);
    const until = Math.min(latestEnd(now), Math.max(now + 6 * 3_600_000, ...resets));
    this.outbox.set(READING_PREFIX + reading.account, { value: readingValue(reading, this.options.machine), until });
    void this.flush();
  }

  // Calls heard with each reading of the account another machine shares from now on; returns the remover.
  onReading(account: string, heard: (reading: SharedReading) => void): () => void {
    const listener = { account, heard };
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  close(): void {
    this.state = "closed";
    this.clock.clearTimeout(this.timer);
    this.drop();
  }

  // --- internal ---

  // One connection: the client, its subscriber on the channel, then the merge both ways. False when the store is away.
  private connect(): Promise<boolean> {
    this.connecting ??= this.connectOnce().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connectOnce(): Promise<boolean> {
    const generation = ++this.generation;
    try {
      const { createClient } = await loadClient();
      const client = createClient({ url: this.options.store.url, disableOfflineQueue: true, socket: { connectTimeout: ANSWER_MS, reconnectStrategy: false } }) as unknown as Client;
      const subscriber = this.options.listen === false ? undefined : client.duplicate();
      this.client = client;
      this.subscriber = subscriber;
      for (const one of subscriber ? [client, subscriber] : [client]) {
        one.on("error", (error) => this.away(generation, reasonOf(error)));
        one.on("end", () => this.away(generation, "closed the connection"));
      }
      await this.answer(client.connect());
      if (subscriber) {
        await this.answer(subscriber.connect());
        await this.answer(subscriber.subscribe(CHANNEL, (message) => void this.heard(message)));
      }
      await this.answer(this.merge(client));
      if (generation !== this.generation || this.state === "closed") return false;
      if (this.state === "away") this.options.record?.("shared-store", { state: "back", store: this.options.store.shown });
      this.state = "up";
      this.told = false;
      this.tries = 0;
      await this.flush();
      this.schedule(CHECK_MS, () => void this.check(generation));
      return true;
    } catch (error) {
      this.away(generation, reasonOf(error));
      return false;
    }
  }

  // The store's rests and readings into the local table and quota files; the table's rests it lacks into the outbox.
  private async merge(client: Client): Promise<void> {
    const now = this.clock.now();
    const heard = new Map<string, Cooldown>();
    for (const [key, value] of await this.values(client, REST_PREFIX)) {
      const row = this.checked(key, readRest(key.slice(REST_PREFIX.length), value, now));
      if (row) heard.set(key.slice(REST_PREFIX.length), row);
    }
    await this.keep(heard);
    for (const [key, value] of await this.values(client, READING_PREFIX)) {
      const reading = this.checked(key, readReading(key.slice(READING_PREFIX.length), value, now));
      if (reading) this.keepReading(reading);
    }
    const table = await readCooldowns(this.options.dataDir);
    for (const [key, row] of table.entries) {
      const theirs = heard.get(key);
      if (row.until.getTime() > now && (!theirs || theirs.until.getTime() < row.until.getTime())) {
        this.outbox.set(REST_PREFIX + key, { value: restValue(row, this.options.machine), until: row.until.getTime() });
      }
    }
  }

  // Every key under a prefix with its value (a key of another type reads as no string).
  private async values(client: Client, prefix: string): Promise<[string, unknown][]> {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = (await client.sendCommand(["SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", "500"])) as [string, string[]];
      cursor = String(next);
      keys.push(...batch.map(String));
    } while (cursor !== "0" && keys.length < 100_000);
    const found: [string, unknown][] = [];
    for (let at = 0; at < keys.length; at += 500) {
      const batch = keys.slice(at, at + 500);
      const values = await client.sendCommand(["MGET", ...batch]).catch(() => batch.map(() => undefined));
      batch.forEach((key, index) => found.push([key, (values as unknown[])[index] ?? undefined]));
    }
    return found.filter(([, value]) => value !== undefined);
  }

  // What the store says of one change, heard on the channel.
  private async heard(message: string): Promise<void> {
    const cut = message.indexOf("\n");
    const key = cut < 0 ? message : message.slice(0, cut);
    const value = cut < 0 ? undefined : message.slice(cut + 1);
    const now = this.clock.now();
    if (key.startsWith(REST_PREFIX)) {
      const row = this.checked(key, readRest(key.slice(REST_PREFIX.length), value, now));
      if (row) await this.keep(new Map([[key.slice(REST_PREFIX.length), row]]));
    } else if (key.startsWith(READING_PREFIX)) {
      const reading = this.checked(key, readReading(key.slice(READING_PREFIX.length), value, now));
      if (!reading || reading.machine === this.options.machine) return;
      this.keepReading(reading);
      for (const listener of [...this.listeners]) if (listener.account === reading.account) listener.heard(reading);
    }
  }

  // Rests heard written into the local table, those that end later than what it holds.
  private async keep(rests: Map<string, Cooldown>): Promise<void> {
    const later = await recordLater(this.options.dataDir, rests, new Date(this.clock.now()));
    for (const [key, row] of later) this.options.record?.("shared-rest-heard", { account: key, until: row.until.toISOString(), machine: row.machine ?? null });
  }

  private keepReading(reading: SharedReading): void {
    for (const entry of this.options.entriesOf(reading.account)) {
      const kept: QuotaReading = { entry, at: reading.at, source: reading.source, windows: reading.windows };
      recordQuota(this.options.dataDir, kept);
    }
  }

  // A value read back, or undefined with the bad one said once per key.
  private checked<T>(key: string, read: Read<T>): T | undefined {
    if ("ok" in read) return read.ok;
    if ("bad" in read && !this.badSaid.has(key)) {
      this.badSaid.add(key);
      this.options.notice(`uuldana: the shared rest store holds ${key}, which is not a rest or reading uuldana wrote (${read.bad}); it is read as none`);
    }
    return undefined;
  }

  // Sends what the store has not taken yet. False when the store is away (the outbox waits for it).
  private async flush(): Promise<boolean> {
    if (this.state === "connecting") await this.connect();
    const client = this.client;
    if (this.state !== "up" || !client) return false;
    const generation = this.generation;
    try {
      for (const [key, { value, until }] of [...this.outbox]) {
        const now = this.clock.now();
        if (until > now) await this.answer(client.sendCommand(["EVAL", SET_LATER, "1", key, value, String(until), CHANNEL, String(latestEnd(now))]));
        if (this.outbox.get(key)?.value === value) this.outbox.delete(key);
      }
      return true;
    } catch (error) {
      this.away(generation, reasonOf(error));
      return false;
    }
  }

  // Is a store that is up still answering? A stopped server or a cut-off link says nothing: only a question tells.
  private async check(generation: number): Promise<void> {
    if (generation !== this.generation || this.state !== "up" || !this.client) return;
    try {
      await this.answer(this.client.sendCommand(["PING"]));
      if (this.outbox.size) await this.flush();
      this.schedule(CHECK_MS, () => void this.check(generation));
    } catch (error) {
      this.away(generation, reasonOf(error));
    }
  }

  // The store went away: its connections dropped, the user told once per outage, a new try scheduled.
  private away(generation: number, reason: string): void {
    if (generation !== this.generation || this.state === "closed") return;
    this.generation++;
    this.drop();
    this.state = "away";
    if (!this.told) {
      this.told = true;
      const meanwhile = this.options.meanwhile ?? "this session goes on with its local cooldown table and tries the store again in the background";
      this.options.notice(`uuldana: the shared rest store ${this.options.store.shown} ${reason}; ${meanwhile}`);
      this.options.record?.("shared-store", { state: "away", store: this.options.store.shown, reason });
    }
    const wait = RETRY_MS[Math.min(this.tries++, RETRY_MS.length - 1)]!;
    this.schedule(wait, () => void this.connect());
  }

  private drop(): void {
    for (const one of [this.client, this.subscriber]) {
      try {
        one?.destroy();
      } catch {
        // already closed
      }
    }
    this.client = undefined;
    this.subscriber = undefined;
  }

  private schedule(ms: number, run: () => void): void {
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(run, ms);
  }

  // A store's answer, or an error when none came in time.
  private answer<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => reject(new Error("does not answer")), ANSWER_MS);
      work.then(resolve, reject).finally(() => this.clock.clearTimeout(timer));
    });
  }

  // Waits for work at most ms: true when it was done and said so in time; else the store counts as away.
  private within(work: Promise<boolean>, ms: number, late: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.away(this.generation, late);
        resolve(false);
      }, ms);
      void work.then((done) => {
        this.clock.clearTimeout(timer);
        resolve(done);
      });
    });
  }
}

// The client library, imported once and only when a store is configured.
let library: Promise<typeof import("@redis/client")> | undefined;
function loadClient(): Promise<typeof import("@redis/client")> {
  library ??= import("@redis/client");
  return library;
}

// What a client's error says of the store, for the one notice.
function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (/WRONGPASS|invalid username-password/i.test(text)) return "refused the password (WRONGPASS)";
  if (/NOAUTH/i.test(text)) return "asks for a password (NOAUTH)";
  if (/NOPERM/i.test(text)) return "does not let this user do that (NOPERM)";
  if (code === "ECONNREFUSED") return "refuses connections (ECONNREFUSED)";
  if (code) return `cannot be reached (${code})`;
  if (/does not answer|timeout/i.test(text)) return "does not answer";
  if (/closed/i.test(text)) return "closed the connection";
  return `cannot be used (${text.replace(/\s+/g, " ").slice(0, 120)})`;
}
