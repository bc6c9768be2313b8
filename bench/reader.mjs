// The reader: how fast the classifier gets through agent-like output, handed over in messages of 8 lines as
// the detector does, with 1 line in 50 a near miss (typical) and 1 in 3 (dense). Passes over the two take turns.
// It runs in this process, so it is timed in CPU seconds: unlike the wall clock, they leave out the moments
// other work on the machine had the core, which on a shared machine moved wall-clock passes by 3x.
import { join } from "node:path";

import { NEAR, WORK } from "./agent-lines.mjs";
import { fmt, goal, stats } from "./stats.mjs";

const SIZE_MB = 20;
const PASSES = 7;
const GOAL_MBPS = 50;

export const rows = {
  typical: { name: "reader (CPU time): 1 line in 50 a near miss", goal: `≥ ${GOAL_MBPS} MB/s` },
  dense: { name: "reader (CPU time): 1 line in 3 a near miss" },
};

function output(nearEvery, megabytes) {
  const messages = [];
  let bytes = 0;
  let n = 0;
  while (bytes < megabytes * 1024 * 1024) {
    const message = [];
    for (let j = 0; j < 8; j++, n++) message.push(n % nearEvery === 0 ? NEAR[(n / nearEvery) % NEAR.length | 0] : WORK[(n * 7) % WORK.length]);
    const text = message.join("\n");
    messages.push(text);
    bytes += Buffer.byteLength(text) + 1;
  }
  return messages;
}

// CPU seconds for one pass; a near miss that stops the agent would make the numbers meaningless
function pass(classifyText, messages) {
  const options = { now: new Date("2026-11-30T12:00:00Z"), timeZone: "UTC" };
  const start = process.cpuUsage();
  let stops = 0;
  for (const text of messages) if (classifyText(text, options).stop) stops++;
  const used = process.cpuUsage(start);
  const seconds = (used.user + used.system) / 1e6;
  if (stops !== 0) throw new Error(`the benchmark's near misses gave ${stops} stops`);
  return seconds;
}

export async function measure({ root }) {
  const { classifyText } = await import(join(root, "dist", "core", "reader", "reader.js"));
  const inputs = { typical: output(50, SIZE_MB), dense: output(3, SIZE_MB) };
  // short passes first, so the compiler has warmed up before anything counts
  pass(classifyText, output(50, 2));
  pass(classifyText, output(3, 2));
  const seconds = { typical: [], dense: [] };
  for (let i = 0; i < PASSES; i++) for (const id of Object.keys(inputs)) seconds[id].push(pass(classifyText, inputs[id]));
  const cells = (samples) => {
    const s = stats(samples);
    return { median: fmt.mbps(SIZE_MB / s.median), p95: fmt.mbps(SIZE_MB / s.p95), runs: s.runs, baseline: "-", ratio: "-" };
  };
  const typical = cells(seconds.typical);
  typical.goal = goal(rows.typical.goal, SIZE_MB / stats(seconds.typical).median, (v) => v >= GOAL_MBPS);
  return { rows: { typical, dense: cells(seconds.dense) } };
}
