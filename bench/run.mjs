// npm run bench: every benchmark, one after another (timings taken side by side on a small machine would
// distort each other), printed as one table whose rows are the same every run, so runs compare line by line.
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as cpu from "./cpu.mjs";
import * as echo from "./echo.mjs";
import * as failover from "./failover.mjs";
import * as memory from "./memory.mjs";
import * as providersList from "./providers-list.mjs";
import * as reader from "./reader.mjs";
import * as sharedRests from "./shared-rests.mjs";
import * as tail from "./tail.mjs";
import { machineBusySeconds, ownTreeSeconds } from "./proc.mjs";
import { findScript } from "./script.mjs";
import { since } from "./stats.mjs";
import * as throughput from "./throughput.mjs";
import { findTmux } from "./tmux.mjs";

const SECTIONS = [
  ["providers list", providersList],
  ["throughput", throughput],
  ["key echo", echo],
  ["memory", memory],
  ["cpu", cpu],
  ["tail", tail],
  ["reader", reader],
  ["failover", failover],
  ["shared rests", sharedRests],
];

// UULDANA_BENCH_ONLY="throughput,key echo" measures those sections alone, for work on one of them
const only = process.env.UULDANA_BENCH_ONLY?.split(",").map((label) => label.trim().toLowerCase()).filter(Boolean);
const unknown = only?.filter((label) => !SECTIONS.some(([known]) => known === label)) ?? [];
if (unknown.length > 0) {
  console.error(`UULDANA_BENCH_ONLY names ${unknown.map((label) => `"${label}"`).join(", ")}, ${unknown.length > 1 ? "which are not sections" : "which is not a section"}; the sections are: ${SECTIONS.map(([label]) => label).join(", ")}`);
  process.exit(2);
}
const chosen = only?.length ? SECTIONS.filter(([label]) => only.includes(label)) : SECTIONS;

const started = process.hrtime.bigint();
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const script = findScript();
const tmux = findTmux();
const model = cpus()[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
const cores = availableParallelism();
const busyBefore = machineBusySeconds();
const ownBefore = ownTreeSeconds();
console.log(
  `uuldana ${version} bench · node ${process.version} · ${process.platform} ${process.arch} · ${cores} cores (${model}) · ` +
    `load ${loadavg()[0].toFixed(2)} · ${new Date().toISOString()} · ${script ? script.version : "script(1): n/a"} · ${tmux ? tmux.version : "tmux: n/a"}`,
);

const progress = (text) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${text}`);
const table = [["benchmark", "median", "p95", "runs", "baseline", "ratio", "goal"]];
const notes = [];
if (chosen !== SECTIONS) notes.push(`only ${chosen.map(([label]) => label).join(", ")} measured (UULDANA_BENCH_ONLY)`);
if (!script) notes.push("script(1) with -c was not found, so its rows and the ratios and goals against it read n/a");
if (!tmux) notes.push("tmux was not found, so its rows and the goals against it read n/a");
const took = [];
let failed = false;
for (const [label, section] of chosen) {
  progress(`measuring ${label}…`);
  const start = process.hrtime.bigint();
  let result;
  try {
    result = await section.measure({ root, script, tmux });
  } catch (error) {
    failed = true;
    notes.push(`${label} failed: ${error instanceof Error ? error.message : error}`);
  }
  took.push(`${label} ${(since(start) / 1000).toFixed(0)} s`);
  for (const [id, row] of Object.entries(section.rows)) {
    const cells = result?.rows[id] ?? { median: result ? "n/a" : "failed", p95: "-", runs: 0, baseline: "-", ratio: "-" };
    // a row's goal is judged on the run's figures; one whose section failed still names its goal
    const goal = cells.goal ?? (row.goal ? `${row.goal}: ${result ? "n/a" : "failed"}` : "-");
    table.push([row.name, cells.median, cells.p95, String(cells.runs), cells.baseline, cells.ratio, goal]);
  }
  notes.push(...(result?.notes ?? []));
}
progress("");

const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd());
console.log("");
console.log("ratio: median ÷ baseline in the row's unit (MB/s: above 1x is faster; µs, ms, MB, %: above 1x is more)");
console.log("p95: the slow end of the runs (with few runs, the slowest); runs: samples behind the median");
console.log("goal: each goal with the ratio it is judged on where it names a baseline, from this run's figures; ✓ met, ✗ missed");
// other work on the machine widens the spread; say how much there was rather than let a noisy run pass for a quiet one
const wall = since(started) / 1000;
const others = ((machineBusySeconds() - busyBefore - (ownTreeSeconds() - ownBefore)) / (wall * cores)) * 100;
notes.push(`other work on the machine took ${Math.max(0, others).toFixed(0)} % of its CPU during the run${others > 10 ? ": expect a wider spread than on a quiet machine" : ""}`);
for (const note of notes) console.log(`note: ${note}`);
console.log(`sections: ${took.join(" · ")}`);
console.log(`total wall time: ${wall.toFixed(0)} s`);
// a stray pseudo-terminal or timer must not keep the run open after the table
process.exit(failed ? 1 : 0);
