// Key echo latency: an agent that echoes each key runs in a pseudo-terminal held here, as the user's terminal
// would; one byte goes in, and the time until it comes back is one sample. The agent runs directly, under
// script(1), in tmux (a client attached in that pseudo-terminal, as a user at tmux would type), under a bare
// node-pty relay and under uuldana, one key each in turn, so noise hits all alike.
import { createRequire } from "node:module";
import { join } from "node:path";

import { scratch } from "./scratch.mjs";
import { fmt, ratio, ratioGoal, since, sleep, stats } from "./stats.mjs";
import { killServer, outsideTmux } from "./tmux.mjs";

const TRIALS = 400;
// a host that misses this many echoes in a row has stopped answering; its row reads n/a
const MISSES = 3;

export const rows = {
  direct: { name: "key echo: agent directly" },
  script: { name: "key echo: through script -qfc" },
  tmux: { name: "key echo: through an attached tmux" },
  relay: { name: "key echo: through a bare node-pty relay" },
  uuldana: { name: "key echo: through uuldana run", goal: "≤ 1.5× script · < tmux" },
};

// tmux redraws the pane in the terminal's control sequences, whose letters must not pass for the key's echo
const SEQUENCES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[P^_][^\x1b]*\x1b\\|[ -/]*[0-~])/g;
const asIs = (data) => data;
const text = (data) => data.replace(SEQUENCES, "");

function open(pty, [file, args, shown = asIs], env) {
  const child = pty.spawn(file, args, { name: "xterm-256color", cols: 100, rows: 30, env });
  const session = { child, seen: "", ready: false, waiting: undefined, samples: [], misses: 0, alive: true };
  child.onData((data) => {
    if (!session.ready) session.seen += shown(data);
    if (session.waiting && shown(data).includes(session.waiting.char)) session.waiting.resolve(true);
  });
  child.onExit(() => (session.alive = false));
  return session;
}

async function ready(session) {
  const deadline = Date.now() + 20_000;
  while (!session.seen.includes("READY") && session.alive && Date.now() < deadline) {
    session.child.write("READY");
    await sleep(200);
  }
  session.ready = session.seen.includes("READY");
  return session.ready;
}

async function trial(session, char) {
  let timer;
  const arrived = new Promise((resolve) => (session.waiting = { char, resolve }));
  const start = process.hrtime.bigint();
  session.child.write(char);
  const echoed = await Promise.race([arrived, new Promise((r) => (timer = setTimeout(() => r(false), 1000)))]);
  clearTimeout(timer);
  session.waiting = undefined;
  if (echoed) {
    session.samples.push(since(start) * 1000);
    session.misses = 0;
  } else session.misses++;
}

export async function measure({ root, script, tmux }) {
  const pty = createRequire(join(root, "package.json"))("node-pty");
  const home = scratch("echo");
  const agent = home.tool("echoer", '#!/bin/sh\n[ "$1" = "--version" ] && { echo "echoer 1.0.0"; exit 0; }\nstty raw -echo\nexec cat\n');
  home.provider("echoer", { exit: { signals: ["SIGTERM"], signal_wait_seconds: 1 } });
  home.config({ providers: ["echoer"] });
  const socket = join(home.dir, "tmux");
  const hosts = {
    direct: [agent, []],
    script: script ? ["script", ["-qfc", agent, "/dev/null"]] : undefined,
    // a private server without a config file; no status line, whose clock would redraw letters now and then
    tmux: tmux ? ["tmux", ["-S", socket, "-f", "/dev/null", "set-option", "-g", "status", "off", ";", "new-session", agent], text] : undefined,
    relay: [process.execPath, [join(root, "bench", "relay.mjs"), agent]],
    uuldana: [process.execPath, [join(root, "dist", "core", "cli", "main.js"), "run", "--provider", "echoer"]],
  };
  const sessions = {};
  try {
    const env = outsideTmux(home.env);
    for (const [id, host] of Object.entries(hosts)) if (host) sessions[id] = open(pty, host, env);
    const live = [];
    for (const session of Object.values(sessions)) if (await ready(session)) live.push(session);
    await sleep(300);
    for (let i = 0; i < TRIALS; i++) {
      const char = String.fromCharCode(97 + (i % 26));
      for (const session of live) if (session.misses < MISSES) await trial(session, char);
      await sleep(2);
    }
  } finally {
    for (const { child } of Object.values(sessions)) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
    if (tmux) killServer(socket);
    home.remove();
  }

  const result = (id) => {
    const session = sessions[id];
    return session && session.misses < MISSES ? stats(session.samples) : undefined;
  };
  const r = Object.fromEntries(Object.keys(rows).map((id) => [id, result(id)]));
  const cells = (v, baseline, label) => ({
    median: fmt.us(v?.median),
    p95: fmt.us(v?.p95),
    runs: v?.runs ?? 0,
    baseline: label ? `${label}: ${fmt.us(baseline?.median)}` : "-",
    ratio: label ? ratio(v?.median, baseline?.median) : "-",
  });
  return {
    rows: {
      direct: cells(r.direct),
      script: cells(r.script, r.direct, "directly"),
      tmux: cells(r.tmux, r.script, "script"),
      relay: cells(r.relay, r.script, "script"),
      uuldana: { ...cells(r.uuldana, r.relay, "relay"), goal: `${ratioGoal("≤ 1.5× script", r.uuldana?.median, r.script?.median, (x) => x <= 1.5)} · ${ratioGoal("< tmux", r.uuldana?.median, r.tmux?.median, (x) => x < 1)}` },
    },
  };
}
