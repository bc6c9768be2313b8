// Failover latency: from the last byte of the limit line to the next agent's first output, less quiet_seconds,
// with stand-ins that leave promptly on their exit keys. The baseline is the next agent starting on its own in
// a pseudo-terminal: the part of a failover no switcher can save.
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { scratch } from "./scratch.mjs";
import { fmt, goal, ratio, since, sleep, stats } from "./stats.mjs";

const QUIET = 0.5;
const TRIALS = 7;
// a failover that is broken would otherwise wait out every trial's deadline
const GIVE_UP_AFTER = 2;
const GOAL_MS = 500;

export const rows = {
  failover: { name: "failover: limit line to next agent, less quiet", goal: `< ${GOAL_MS} ms` },
};

// ms from the limit line to the next agent's first line, or undefined when a trial did not get that far (the
// shared-rests section runs it too, with and without a store)
export async function failover(pty, cli, home) {
  rmSync(join(home.dir, "data"), { recursive: true, force: true });
  const child = pty.spawn(process.execPath, [cli, "run"], { name: "xterm-256color", cols: 160, rows: 40, env: home.env, cwd: home.dir });
  let out = "";
  let limitAt;
  let nextAt;
  child.onData((data) => {
    const now = process.hrtime.bigint();
    out += data;
    if (limitAt === undefined && /hit your weekly limit[^\n]*\n/.test(out)) limitAt = now;
    if (nextAt === undefined && out.includes("line agent ready")) nextAt = now;
  });
  try {
    const deadline = Date.now() + 20_000;
    while (!out.includes("limit agent ready") && Date.now() < deadline) await sleep(20);
    child.write("go\r");
    while (nextAt === undefined && Date.now() < deadline) await sleep(5);
  } finally {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  return limitAt !== undefined && nextAt !== undefined ? Number(nextAt - limitAt) / 1e6 - QUIET * 1000 : undefined;
}

// ms from spawning the next agent in a pseudo-terminal to its first line
async function agentStart(pty, file, env) {
  const start = process.hrtime.bigint();
  let at;
  const child = pty.spawn(file, [], { name: "xterm-256color", cols: 160, rows: 40, env });
  child.onData((data) => {
    if (at === undefined && data.includes("line agent ready")) at = since(start);
  });
  const deadline = Date.now() + 10_000;
  while (at === undefined && Date.now() < deadline) await sleep(2);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
  return at;
}

// A home with the two stand-ins a failover goes between; more config fields (a shared store) when given.
export function failoverHome(root, label, fields = {}) {
  const home = scratch(label);
  const agents = join(root, "test", "fixtures", "agents");
  home.link("first", join(agents, "limit-agent.mjs"));
  home.link("second", join(agents, "line-agent.mjs"));
  for (const id of ["first", "second"]) home.provider(id, { prompt: { mode: "argv" }, exit: { keys: ["{escape}", "/exit", "{enter}"], wait_seconds: 2 } });
  home.config({ providers: ["first", "second"], quiet_seconds: QUIET, ...fields });
  home.env.LIMIT_MODE = "answer";
  return home;
}

export async function measure({ root }) {
  const pty = createRequire(join(root, "package.json"))("node-pty");
  const home = failoverHome(root, "failover");
  try {
    const agents = join(root, "test", "fixtures", "agents");
    const cli = join(root, "dist", "core", "cli", "main.js");
    const switched = [];
    const started = [];
    for (let trial = 0, misses = 0; trial < TRIALS && misses < GIVE_UP_AFTER; trial++) {
      const ms = await failover(pty, cli, home);
      if (ms !== undefined) switched.push(ms);
      else misses++;
      const alone = await agentStart(pty, join(agents, "line-agent.mjs"), home.env);
      if (alone !== undefined) started.push(alone);
    }
    const s = stats(switched);
    const base = stats(started);
    return {
      rows: {
        failover: {
          median: s ? fmt.ms(s.median) : "failed",
          p95: fmt.ms(s?.p95),
          runs: s?.runs ?? 0,
          baseline: `agent start: ${fmt.ms(base?.median)}`,
          ratio: ratio(s?.median, base?.median),
          goal: goal(rows.failover.goal, s?.median, (ms) => ms < GOAL_MS),
        },
      },
    };
  } finally {
    home.remove();
  }
}
