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
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

import { failover, failoverHome } from "./failover.mjs";
import { fmt, goal, sleep, stats } from "./stats.mjs";

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

// 3 data dirs × 10 sessions writing for a while, each data dir a machine of its own in a worker thread (its own event
// loop, as another machine's uuldana has); what came of each rest.
async function scale(root, url, seconds) {
  const top = mkdtempSync(join(tmpdir(), "uuldana-bench-shared-"));
  const dirs = Array.from({ length: MACHINES }, (_, index) => join(top, `machine-${index}`));
  for (const dataDir of dirs) mkdirSync(dataDir, { mode: 0o700 });
  const base = Date.now() + 3_600_000;
  // each rest written: when, and when each data dir held it (or a later one of its account)
  const rests = new Map();
  const share = [];
  const notices = [];
  const finals = [];
  let readings = 0;
  const started = Date.now();
  const workers = dirs.map((dataDir, index) => new Worker(new URL(import.meta.url), { workerData: { sharedRestsMachine: true, root, url, dataDir, index, seconds, base, started } }));
  const ended = workers.map(
    (worker) =>
      new Promise((resolve, reject) => {
        worker.on("error", reject);
        worker.on("message", (message) => {
          if (message.written) {
            rests.set(message.written.key, { ...message.written, held: new Map() });
            for (const other of workers) other.postMessage({ rest: message.written });
          } else if (message.held) rests.get(message.held.key)?.held.set(message.held.dataDir, message.held.at);
          else if (message.share !== undefined) share.push(message.share);
          else if (message.reading) readings++;
          else if (message.notice) notices.push(message.notice);
          else if (message.final) {
            finals.push(message.final);
            resolve();
          }
        });
      }),
  );
  await Promise.all(ended);
  await Promise.all(workers.map((worker) => worker.terminate()));
  rmSync(top, { recursive: true, force: true });
  if (notices.length) throw new Error(`the store said: ${notices[0]}`);
  // the latest rest of each account, which every data dir's table must end with
  const latest = new Map();
  for (const rest of rests.values()) latest.set(rest.account, Math.max(latest.get(rest.account) ?? 0, rest.until));
  let lost = 0;
  for (const table of finals) for (const [account, until] of latest) if ((table[account] ?? 0) < until) lost++;
  const spread = [];
  for (const rest of rests.values()) {
    if (rest.held.size < MACHINES) lost++;
    else spread.push(Math.max(0, ...[...rest.held.values()].map((at) => at - rest.at)));
  }
  return { written: rests.size, readings, lost, spread, share };
}

// One machine: its data dir, 10 sessions' stores, each writing a rest and a reading every EVERY_MS; its table watched
// for the rests every machine wrote.
async function machineThread({ root, url, dataDir, index, seconds, base, started }) {
  const load = (path) => import(pathToFileURL(join(root, "dist", "core", ...path)).href);
  const { SharedRests } = await load(["session", "shared-rests.js"]);
  const { readCooldowns, recordRests } = await load(["session", "cooldowns.js"]);
  const { parseSharedUrl } = await load(["config", "shared-url.js"]);
  const now = () => performance.timeOrigin + performance.now();
  const sessions = [];
  for (let one = 0; one < SESSIONS; one++) {
    const options = { store: parseSharedUrl(url, "bench"), dataDir, machine: `machine-${index}`, entriesOf: () => [], notice: (line) => parentPort.postMessage({ notice: line }) };
    sessions.push(await SharedRests.open(options, 2000));
  }
  const waiting = new Map();
  let looking = false;
  let again = false;
  const look = async () => {
    if (looking) return void (again = true);
    looking = true;
    do {
      again = false;
      const table = await readCooldowns(dataDir);
      for (const [key, rest] of [...waiting]) {
        if ((table.entries.get(rest.account)?.until.getTime() ?? 0) < rest.until) continue;
        waiting.delete(key);
        parentPort.postMessage({ held: { key, dataDir, at: now() } });
      }
    } while (again);
    looking = false;
  };
  parentPort.on("message", (message) => {
    if (!message.rest) return;
    waiting.set(message.rest.key, message.rest);
    void look();
  });
  const watcher = watch(dataDir, () => void look());
  const end = Date.now() + seconds * 1000;
  let count = 0;
  await Promise.all(
    sessions.map(async (shared, one) => {
      await sleep(((index * SESSIONS + one) * EVERY_MS) / (MACHINES * SESSIONS));
      while (Date.now() < end) {
        const account = `account-${Math.floor(Math.random() * ACCOUNTS)}`;
        // later than every rest written before it, on any machine: each must reach every data dir
        const until = base + Math.round((now() - started) * 4) + index;
        const key = `${account}#${until}`;
        const row = { until: new Date(until), since: new Date(), source: "inferred", kind: "weekly", text: "bench rest" };
        parentPort.postMessage({ written: { key, account, until, at: now() } });
        await recordRests(dataDir, new Map([[account, row]]));
        const sharing = now();
        await shared.shareRest(account, row);
        parentPort.postMessage({ share: now() - sharing });
        shared.shareReading({ account, at: new Date(), source: "bench", windows: [{ name: "five_hour", usedPercent: Math.random() * 100 }] });
        parentPort.postMessage({ reading: ++count });
        await sleep(EVERY_MS);
      }
    }),
  );
  // the other machines' last rests arrive within 10 s, or are lost
  await sleep(3000);
  const settle = Date.now() + 10_000;
  while (waiting.size && Date.now() < settle) {
    await look();
    await sleep(100);
  }
  watcher.close();
  for (const shared of sessions) shared.close();
  const table = await readCooldowns(dataDir);
  parentPort.postMessage({ final: Object.fromEntries([...table.entries].map(([account, row]) => [account, row.until.getTime()])) });
}

if (!isMainThread && workerData?.sharedRestsMachine) await machineThread(workerData);

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
