// Shared rests at scale: one redis-server (or valkey-server) from the machine's packages, 3 data dirs standing for 3
// machines, 10 sessions' stores in each (each with its own connection and subscription, as a session holds one),
// every session writing a rest and a reading every 5 s for UULDANA_BENCH_SHARED_SECONDS (60 by default). Measured:
// that no rest is lost (every data dir's table ends with the latest rest of every account), the time from a rest
// written to the last data dir holding it (where its sessions' rest watches act on it), what the store's part adds
// to a rest (the wait a failover has for it), and the failover row run with and without shared_rests.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, watch } from "node:fs";
import { createRequire } from "node:module";
import { createServer, createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { failover, failoverHome } from "./failover.mjs";
import { fmt, goal, since, sleep, stats } from "./stats.mjs";

const MACHINES = 3;
const SESSIONS = 10;
const ACCOUNTS = 20;
const EVERY_MS = 5000;
const TRIALS = 7;

export const rows = {
  lost: { name: "shared rests: rests lost (3 dirs × 10 sessions)", goal: "0" },
  spread: { name: "shared rests: written → last data dir holds it" },
  spread99: { name: "shared rests: written → last data dir, p99" },
  share: { name: "shared rests: store's part of a rest (a failover's wait)", goal: "< 250 ms" },
  failover: { name: "failover with shared_rests, less quiet", goal: "no more than failover + 25 ms" },
};

export async function measure({ root }) {
  const server = ["redis-server", "valkey-server"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);
  if (!server) return { rows: {}, notes: ["shared rests: no redis-server or valkey-server on this machine, so its rows read n/a"] };
  const seconds = Number(process.env.UULDANA_BENCH_SHARED_SECONDS ?? 60);
  const store = await startServer(server);
  const homes = [];
  try {
    const load = await scale(root, store.url, seconds);
    const pty = createRequire(join(root, "package.json"))("node-pty");
    const cli = join(root, "dist", "core", "cli", "main.js");
    const plain = failoverHome(root, "shared-plain");
    const shared = failoverHome(root, "shared-store", { shared_rests: store.url });
    homes.push(plain, shared);
    const [without, withStore] = [[], []];
    for (let trial = 0; trial < TRIALS; trial++) {
      for (const [home, into] of [[plain, without], [shared, withStore]]) {
        // each trial meets the wall afresh: the store forgets the last trial's rest as the data dir does
        await store.flush();
        const ms = await failover(pty, cli, home);
        if (ms !== undefined) into.push(ms);
      }
    }
    const spread = stats(load.spread);
    const share = stats(load.share);
    const f = stats(withStore);
    const base = stats(without);
    const p99 = percentile(load.spread, 0.99);
    return {
      rows: {
        lost: { median: String(load.lost), p95: "-", runs: load.written, baseline: "-", ratio: "-", goal: goal(rows.lost.goal, load.lost, (n) => n === 0) },
        spread: { median: fmt.ms(spread?.median), p95: fmt.ms(spread?.p95), runs: spread?.runs ?? 0, baseline: "-", ratio: "-" },
        spread99: { median: fmt.ms(p99), p95: "-", runs: spread?.runs ?? 0, baseline: "-", ratio: "-" },
        share: { median: fmt.ms(share?.median), p95: fmt.ms(share?.p95), runs: share?.runs ?? 0, baseline: "-", ratio: "-", goal: goal(rows.share.goal, share?.p95, (ms) => ms < 250) },
        failover: {
          median: fmt.ms(f?.median),
          p95: fmt.ms(f?.p95),
          runs: f?.runs ?? 0,
          baseline: `without: ${fmt.ms(base?.median)}`,
          ratio: f && base ? `${(f.median - base.median).toFixed(0)} ms` : "n/a",
          goal: goal(rows.failover.goal, f && base ? f.median - base.median : undefined, (ms) => ms <= 25),
        },
      },
      notes: [`shared rests: ${MACHINES} data dirs × ${SESSIONS} sessions for ${seconds} s against one ${server}, a rest and a reading from each session every ${EVERY_MS / 1000} s; ${load.written} rests, ${load.readings} readings`],
    };
  } finally {
    for (const home of homes) home.remove();
    store.stop();
  }
}

// 3 data dirs × 10 sessions writing for a while; what came of each rest.
async function scale(root, url, seconds) {
  const { SharedRests } = await import(pathToFileURL(join(root, "dist", "core", "session", "shared-rests.js")).href);
  const { readCooldowns, recordRests } = await import(pathToFileURL(join(root, "dist", "core", "session", "cooldowns.js")).href);
  const { parseSharedUrl } = await import(pathToFileURL(join(root, "dist", "core", "config", "shared-url.js")).href);
  const top = mkdtempSync(join(tmpdir(), "uuldana-bench-shared-"));
  const dirs = Array.from({ length: MACHINES }, (_, index) => join(top, `machine-${index}`));
  for (const dataDir of dirs) mkdirSync(dataDir, { mode: 0o700 });
  const notices = [];
  const sessions = [];
  for (const [index, dataDir] of dirs.entries()) {
    for (let one = 0; one < SESSIONS; one++) {
      const options = { store: parseSharedUrl(url, "bench"), dataDir, machine: `machine-${index}`, entriesOf: () => [], notice: (line) => notices.push(line) };
      sessions.push({ dataDir, shared: await SharedRests.open(options, 2000) });
    }
  }
  // the rests written and not yet held by every data dir: account → { until, at, left (dirs still to hold it) }
  const waiting = new Map();
  const spread = [];
  const share = [];
  const latest = new Map();
  const look = async (dataDir) => {
    const table = await readCooldowns(dataDir);
    for (const [key, rest] of [...waiting]) {
      if (!rest.left.has(dataDir) || (table.entries.get(rest.account)?.until.getTime() ?? 0) < rest.until) continue;
      rest.left.delete(dataDir);
      if (rest.left.size === 0) {
        spread.push(since(rest.at));
        waiting.delete(key);
      }
    }
  };
  const watchers = dirs.map((dataDir) => watch(dataDir, () => void look(dataDir)));
  let written = 0;
  let readings = 0;
  let counter = 0;
  const base = Date.now() + 3_600_000;
  const end = Date.now() + seconds * 1000;
  const writers = sessions.map(async ({ dataDir, shared }, index) => {
    await sleep((index * EVERY_MS) / sessions.length);
    while (Date.now() < end) {
      const account = `account-${Math.floor(Math.random() * ACCOUNTS)}`;
      // each rest ends later than every one before it: every one must reach every data dir
      const until = base + ++counter * 1000;
      const row = { until: new Date(until), since: new Date(), source: "inferred", kind: "weekly", text: "bench rest" };
      const at = process.hrtime.bigint();
      waiting.set(`${account}#${until}`, { account, until, at, left: new Set(dirs) });
      latest.set(account, until);
      await recordRests(dataDir, new Map([[account, row]]));
      const sharing = process.hrtime.bigint();
      await shared.shareRest(account, row);
      share.push(since(sharing));
      shared.shareReading({ account, at: new Date(), source: "bench", windows: [{ name: "five_hour", usedPercent: Math.random() * 100 }] });
      written++;
      readings++;
      await sleep(EVERY_MS);
    }
  });
  await Promise.all(writers);
  // a rest is lost when a data dir never holds it (or a later one of its account): waited for 10 s more at most
  const settle = Date.now() + 10_000;
  while (waiting.size && Date.now() < settle) {
    for (const dataDir of dirs) await look(dataDir);
    await sleep(100);
  }
  let lost = 0;
  for (const dataDir of dirs) {
    const table = await readCooldowns(dataDir);
    for (const [account, until] of latest) if ((table.entries.get(account)?.until.getTime() ?? 0) < until) lost++;
  }
  for (const watcher of watchers) watcher.close();
  for (const { shared } of sessions) shared.close();
  rmSync(top, { recursive: true, force: true });
  if (notices.length) throw new Error(`the store said: ${notices[0]}`);
  return { written, readings, lost: lost + waiting.size, spread, share };
}

function percentile(samples, share) {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)];
}

// redis-server on a free port in a temporary folder, keeping nothing on disk.
async function startServer(server) {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-redis-"));
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const child = spawn(server, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
  for (let tries = 0; tries < 200; tries++) {
    const up = await new Promise((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (up) break;
    await sleep(25);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    flush: () =>
      new Promise((resolve) => {
        const socket = createConnection({ port, host: "127.0.0.1" }, () => socket.write("*1\r\n$8\r\nFLUSHALL\r\n"));
        socket.on("data", () => {
          socket.destroy();
          resolve();
        });
        socket.on("error", () => resolve());
      }),
    stop() {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
