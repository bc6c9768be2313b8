import type { Context } from "./context.js";
import { formatInstant, type Assessment } from "./eligibility.js";
import { UuldanaError } from "./errors.js";
import { restoreTerminal, startRun, type RunResult } from "./host.js";
import type { Level } from "./levels.js";
import { assessProviders } from "./providers-command.js";
import { result, type CommandResult } from "./result.js";
import { compilePhrase } from "./phrases.js";
import { classifyText } from "./reader.js";
import { newSessionId } from "./session-id.js";
import { signalNumber } from "./terminal.js";
import { formatDuration } from "./time.js";
import type { Manifest } from "./types.js";

export interface RunOptions {
  provider?: string;
  ceiling?: Level;
  failover?: boolean;
  agentArgs: string[];
  now?: Date;
}

// uuldana run: starts the first eligible entry of the priority list and passes the terminal through to it.
export async function runCommand(context: Context, options: RunOptions): Promise<CommandResult> {
  const { rows, notes, ceiling } = await assessProviders(context, { ceiling: options.ceiling, now: options.now });
  for (const note of notes) process.stderr.write(`${note}\n`);
  const ordered = putFirst(rows, options.provider);
  const chosen = ordered.find((row) => row.eligible);
  if (!chosen) return result("", nothingCanRun(ordered, ceiling, options.now ?? new Date()), 1);

  const manifest = chosen.manifest!;
  const flags = manifest.levels![chosen.level!]!;
  const args = [...(manifest.args ?? []), ...(flags.args ?? []), ...chosen.entry.args, ...options.agentArgs];
  // the level's environment comes last: an entry's env may not loosen what the level enforces
  const env = { ...stringEnv(process.env), ...chosen.entry.env, ...(flags.env ?? {}) };
  const sessionId = newSessionId(options.now);
  const phrases = (manifest.limit_phrases ?? []).map(compilePhrase);
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const ignored: string[] = [];
  const resting = rows.filter((row) => row.restingUntil).map((row) => `${row.entry.key} until ${formatInstant(row.restingUntil!)}`);
  process.stderr.write(
    `uuldana: starting ${chosen.entry.key} (${manifest.name} ${chosen.detection?.version ?? ""}) at ${chosen.level} · ${context.config.commandKey} opens uuldana's prompt\n`,
  );
  const run = startRun({
    file: chosen.detection!.path!,
    args,
    env,
    cwd: context.cwd,
    entry: chosen.entry.key,
    level: chosen.level!,
    exit: manifest.exit,
    commandKey: context.config.commandKey,
  scrollback: context.config.scrollback,
  detect: {
    quietSeconds: context.config.quietSeconds,
    dismissSeconds: context.config.dismissSeconds,
    classify: (text) => classifyText(text, { now: new Date(), timeZone, phrases }),
  },
  onDetection: (event) => {
    if (event.type === "dismissed") {
      ignored.push(`uuldana: text like a usage limit was ignored at ${new Date(event.at).toTimeString().slice(0, 5)}: ${event.text.replace(/\s+/g, " ").slice(0, 160)}`);
    }
  },
    describe: {
      header: () => [`session ${sessionId} · ceiling ${ceiling}`, `resting: ${resting.length ? resting.join(", ") : "none"}`],
      status: () => [`session ${sessionId}`, `ceiling ${ceiling}; resting: ${resting.length ? resting.join(", ") : "none"}`],
    },
  });
  // SIGTERM, SIGHUP or SIGINT to uuldana stops the agent the graceful way; a crash of uuldana hangs it up
  let receivedSignal: NodeJS.Signals | undefined;
  const stopOnSignal = (signal: NodeJS.Signals): void => {
    receivedSignal ??= signal;
    void run.stop();
  };
  const onCrash = (error: Error): void => {
    restoreTerminal();
    run.agent.signal("SIGHUP");
    process.stderr.write(`uuldana: internal error: ${error.message}\nhint: this is a bug in uuldana; please report it with the command you ran\n`);
    process.exit(70);
  };
  const signals: NodeJS.Signals[] = ["SIGTERM", "SIGHUP", "SIGINT"];
  for (const signal of signals) process.on(signal, stopOnSignal);
  process.on("uncaughtException", onCrash);
  let outcome: RunResult;
  try {
    outcome = await run.result;
  } finally {
    for (const signal of signals) process.off(signal, stopOnSignal);
    process.off("uncaughtException", onCrash);
    restoreTerminal();
  }
  const limit = outcome.detection?.type === "stop" ? outcome.detection : undefined;
  const said = limit
    ? [
        `uuldana: ${chosen.entry.key} said its usage allowance is gone (${limit.verdict.kind === "unknown" ? "usage" : limit.verdict.kind} limit${limit.verdict.reset_at ? `; returns ${formatInstant(new Date(limit.verdict.reset_at))}` : ""})`,
      ]
    : [];
  const ending = [...ignored, ...said, describeEnding(chosen.entry.key, manifest, outcome)].join("\n");
  if (receivedSignal) return result("", `${ending}\n`, 128 + signalNumber(receivedSignal));
  const code = outcome.signal ? 128 + outcome.signal : outcome.exitCode;
  return result("", `${ending}\n`, code);
}

// --- internal ---

function putFirst(rows: Assessment[], key: string | undefined): Assessment[] {
  if (!key) return rows;
  const index = rows.findIndex((row) => row.entry.key === key);
  if (index === -1) {
    throw new UuldanaError("E_USAGE", `--provider ${key}: no entry has this key`, {
      details: [`  entries: ${rows.map((row) => row.entry.key).join(", ") || "none"}`],
      hint: 'run "uuldana providers list --all" to see every entry and provider',
    });
  }
  return [rows[index]!, ...rows.slice(0, index), ...rows.slice(index + 1)];
}

// One line per entry saying why it cannot run, and when the first resting one returns.
function nothingCanRun(rows: Assessment[], ceiling: Level, now: Date): string {
  if (rows.length === 0) return "uuldana: no entry can run: no provider is listed in config.json and none is installed\n";
  const lines = [`uuldana: no entry can run under the ceiling ${ceiling}:`];
  for (const row of rows) lines.push(`  ${row.entry.key}: ${row.reasons.join("; ")}`);
  const returns = rows
    .map((row) => row.restingUntil)
    .filter((until): until is Date => until !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  if (returns) {
    const minutes = Math.max(1, Math.ceil((returns.getTime() - now.getTime()) / 60_000));
    lines.push(`The first resting entry returns in ${minutes} minute${minutes === 1 ? "" : "s"} (${formatInstant(returns)}).`);
  }
  return lines.join("\n") + "\n";
}

function describeEnding(entry: string, manifest: Manifest, outcome: RunResult): string {
  const after = formatDuration(outcome.durationMs);
  if (outcome.stop && outcome.stop.step !== "exited") {
    const how = outcome.stop.step === "keys" ? `its exit keys` : outcome.stop.step;
    return `uuldana: stopped ${entry} (${manifest.name}) with ${how} after ${after}`;
  }
  if (outcome.signal) return `uuldana: ${entry} (${manifest.name}) was killed by signal ${outcome.signal} after ${after}`;
  return `uuldana: ${entry} (${manifest.name}) exited with code ${outcome.exitCode} after ${after}`;
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}
