import type { CeilingInForce, Level } from "../config/levels.js";
import type { PaidUsage } from "../config/config.js";
import type { ManifestRecord } from "../registry/types.js";
import type { Assessment } from "./eligibility.js";
import type { RunPart } from "./handoff.js";
import type { Journal } from "./journal.js";
import type { Gate } from "../registry/gate.js";
import type { RunReport, RunStart } from "./result.js";
import type { SharedRests } from "./shared-rests.js";

// What one run of one entry is given, and what it leaves: the session hands these to runEntry.

// The settings a run reads: the few config values and places it uses, not the session's whole context.
export interface RunSettings {
  cwd: string;
  dataDir: string;
  // the user's config.json, which /agent changes
  userFile: string;
  quietSeconds: number;
  dismissSeconds: number;
  cooldownMinutes: number;
  receiverSeconds: number;
  rotateAtPercentLeft: number | undefined;
  returnHome: boolean;
  commandKey: string;
  scrollback: number;
  // an agent's offer of paid usage at its limit, and whether the run is unattended (--wait): no one to ask
  paidUsage: PaidUsage;
  unattended: boolean;
  // the shared rest store, when shared_rests names one: rests and readings go there after the local table
  shared?: SharedRests | undefined;
}

export interface EntryRunOptions {
  chosen: Assessment;
  agentArgs: string[];
  prompt: string | undefined;
  promptFile: string | undefined;
  ceiling: Level;
  // where the ceiling came from (the user's config, the default, --ceiling or the project's config)
  ceilingFrom: CeilingInForce["from"];
  sessionId: string;
  journal: Journal;
  // the run's number in the session, for its files
  runIndex: number;
  start: RunStart;
  nativeResume: string[] | undefined;
  restedUntil: Date | undefined;
  // another entry can take over when this one's allowance is gone; why not, when it cannot
  failover: boolean;
  why: string;
  rows: Assessment[];
  // the manifest file of the entry's provider, for its adapter and patterns
  record: ManifestRecord;
  models: readonly string[];
  // the session's redactor, for what leaves the journal's hands (the cooldown row), and for lines kept as lines
  redact: (text: string) => string;
  redactLines: (lines: readonly string[]) => string[];
  terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } | undefined;
  // aborted when the session must end; a run that starts just after is stopped at once
  stopped: AbortSignal;
  // told once the run is set up, before the agent starts
  starting: (run: RunReport) => void;
  // the agent's pid while it runs, for a crash of uuldana to stop it
  active: (pid: number | undefined) => void;
  // whether the agent's screen asks to sign in or asks the user a question first (its manifest's lines)
  gate?: (visible: readonly string[]) => Gate | undefined;
}

// What a run leaves for the next: its report and its part of the conversation.
export interface EntryRunEnd {
  report: RunReport;
  part: RunPart | undefined;
}
