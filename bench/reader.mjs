// The reader and the detector: classifier throughput on 50 MB of agent-like output, and uuldana's CPU while an
// agent streams output and while it sits idle.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Agent-like output: prose, tool calls, code and diffs, with near misses mixed in.
const WORK = [
  "I'll start by reading the parser module to see how tokens are produced.",
  "  const tokens = lexer.tokenize(source); // split the input",
  "⏺ Update(src/parser.ts)",
  "  ⎿  Updated src/parser.ts with 12 additions and 3 removals",
  "+    if (token.kind === 'eof') return node;",
  "-    if (token.kind == 'eof') { return node }",
  "Running the test suite now; 142 tests so far, 3 failing.",
  "✻ Thinking… (12s · esc to interrupt)",
  "Here is a summary of the changes I made to the error handling code.",
  "│ > Try \"fix the failing tests\"                                          │",
  "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
  "Should I also update the documentation for the new flag?",
  "  src/lexer.ts:88:14 - note: the scanner now keeps track of line and column",
  "All 145 tests pass. The refactor is complete and the public API is unchanged.",
];
const NEAR = [
  "You've used 45% of your weekly limit · resets Mon 9am",
  "Rate limit reached for requests per minute. Retrying in 5s…",
  "The context window is 80% full; older turns will be summarised soon.",
];

// 50 MB of output in messages of 8 lines, as the detector hands them over; nearEvery: one line in so many is a
// near miss (the words of a limit without the allowance being gone).
function output(nearEvery) {
  const messages = [];
  let bytes = 0;
  let n = 0;
  while (bytes < 50 * 1024 * 1024) {
    const message = [];
    for (let j = 0; j < 8; j++, n++) message.push(n % nearEvery === 0 ? NEAR[(n / nearEvery) % NEAR.length | 0] : WORK[(n * 7) % WORK.length]);
    const text = message.join("\n");
    messages.push(text);
    bytes += Buffer.byteLength(text) + 1;
  }
  return messages;
}

function throughput(classifyText, messages) {
  const options = { now: new Date("2026-11-30T12:00:00Z"), timeZone: "UTC" };
  const start = process.hrtime.bigint();
  let stops = 0;
  for (const text of messages) if (classifyText(text, options).stop) stops++;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (stops !== 0) throw new Error(`the benchmark's near misses gave ${stops} stops`);
  return 50 / seconds;
}

export async function measureReader(root) {
  const { classifyText } = await import(join(root, "dist", "core", "reader.js"));
  const typical = throughput(classifyText, output(50));
  const dense = throughput(classifyText, output(3));
  const cpu = await detectorCpu(root);
  return [
    { name: "reader: 50 MB, 1 line in 50 a near miss", median: `${typical.toFixed(0)} MB/s`, p95: "-", baseline: "goal ≥ 50 MB/s", ratio: "-" },
    { name: "reader: 50 MB, 1 line in 3 a near miss", median: `${dense.toFixed(0)} MB/s`, p95: "-", baseline: "-", ratio: "-" },
    { name: "uuldana CPU, agent streaming 2 MB/s", median: `${cpu.streaming.toFixed(1)} %`, p95: "-", baseline: "-", ratio: "-" },
    { name: "uuldana CPU, agent idle", median: `${cpu.idle.toFixed(2)} %`, p95: "-", baseline: "goal ~0 %", ratio: "-" },
  ];
}

// CPU time uuldana spends (user + system, all threads) over a few seconds, as a share of one core.
async function detectorCpu(root) {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-bench-reader-"));
  mkdirSync(join(dir, "config", "providers"), { recursive: true });
  mkdirSync(join(dir, "bin"));
  const agent = join(dir, "bin", "streamer");
  writeFileSync(
    agent,
    `#!/usr/bin/env node
if (process.argv.includes("--version")) { console.log("streamer 1.0.0"); process.exit(0); }
const lines = ${JSON.stringify([...WORK, ...NEAR])};
let i = 0;
const stream = setInterval(() => { let out = ""; for (let j = 0; j < 200; j++) out += lines[i++ % lines.length] + "\\r\\n"; process.stdout.write(out); }, 10);
setTimeout(() => clearInterval(stream), Number(process.env.STREAM_MS));
setInterval(() => {}, 1000);
`,
  );
  chmodSync(agent, 0o755);
  writeFileSync(
    join(dir, "config", "providers", "streamer.json"),
    JSON.stringify({ id: "streamer", name: "streamer", executables: ["streamer"], version: { args: ["--version"], pattern: "^streamer (\\S+)" }, levels: { ask: {} }, exit: { signals: ["SIGTERM"] } }),
  );
  writeFileSync(join(dir, "config", "config.json"), JSON.stringify({ auto_detect: false, providers: ["streamer"] }));
  const env = { ...process.env, PATH: `${join(dir, "bin")}:${process.env.PATH}`, UULDANA_CONFIG_DIR: join(dir, "config"), UULDANA_DATA_DIR: join(dir, "data"), UULDANA_CACHE_DIR: join(dir, "cache"), STREAM_MS: "4000" };
  const child = spawn(process.execPath, [join(root, "dist", "core", "cli.js"), "run", "--provider", "streamer"], { env, stdio: ["ignore", "ignore", "ignore"] });
  const ticks = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  const hz = 100;
  await new Promise((r) => setTimeout(r, 1000));
  const a = ticks();
  await new Promise((r) => setTimeout(r, 2500));
  const b = ticks();
  await new Promise((r) => setTimeout(r, 2500));
  const c = ticks();
  await new Promise((r) => setTimeout(r, 5000));
  const d = ticks();
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  rmSync(dir, { recursive: true, force: true });
  return { streaming: ((b - a) / hz / 2.5) * 100, idle: ((d - c) / hz / 5) * 100 };
}
