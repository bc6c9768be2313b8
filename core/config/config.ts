import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFile } from "../base/files.js";
import type { Level } from "./levels.js";
import { parseJson } from "../base/json.js";
import { expandHome, type Env } from "../base/paths.js";
import { findProjectConfig } from "./project-config.js";
import { credentialArgs } from "./redaction.js";
import { describePointer } from "../base/schema.js";
import { checkSchema, checkUserConfig } from "./config-check.js";
import { parseSharedUrl, type SharedStoreUrl } from "./shared-url.js";

// The settings a session runs with, after defaults, the user's file and the project's restrictions.
export interface Config {
  entries: Entry[];
  failover: boolean;
  autoDetect: boolean;
  cooldownMinutes: number;
  // the user's own ceiling (config.json's, else the default); ceilingInForce adds --ceiling and the project's
  ceiling: Level;
  ceilingFrom: "default" | "config";
  // the ceiling a project set, which nothing (not even --ceiling) may exceed
  projectCeiling: Level | undefined;
  quietSeconds: number;
  dismissSeconds: number;
  commandKey: string;
  scrollback: number;
  // the git workspace's state goes into the handoff prompt (only the user's own file may say so)
  handoffWorkspace: boolean;
  // the share of a quota window left (percent) at which the session moves on before the wall; undefined: never
  rotateAtPercentLeft: number | undefined;
  // how long an agent started with the conversation has to show that it took it (seconds)
  receiverSeconds: number;
  // with every entry resting, wait for the first to return (at most waitMaxHours away) instead of exiting
  wait: boolean;
  waitMaxHours: number;
  // move the session back to an entry higher in the list once it has rested, at the next turn boundary
  returnHome: boolean;
  // the bell, desktop notifications and notify_command at a session's events (only the user's own file may say so)
  notify: boolean;
  // run at each of those events with the event as JSON on stdin; an argv, leading ~/ expanded
  notifyCommand: string[] | undefined;
  // an agent's offer of paid usage at its limit: left for a failover, put to the user, or left to the agent
  paidUsage: PaidUsage;
  packs: string[];
  // the built-in ids a pack's manifest replaces, by pack name
  replaces: Record<string, string>;
  // patterns blanked out of session journals
  redact: RegExp[];
  // the Redis or Valkey server rests and readings are shared through (shared_rests or UULDANA_SHARED_RESTS); none: this machine only
  sharedRests: SharedStoreUrl | undefined;
  // the env values (and credential args) of every entry of the user's own file, kept before a project's config cuts the list down: they
  // are secrets whatever the project keeps
  secrets: string[];
  userFile: string;
  projectFile: string | undefined;
  notes: string[];
}

// What uuldana does when an agent at its limit offers paid usage (only the user's own file may say so).
export type PaidUsage = "never" | "ask" | "allow";

interface RawEntry {
  id: string;
  name?: string;
  account?: string;
  env?: Record<string, string>;
  args?: string[];
  rotate_at_percent_left?: number;
  native_wait?: NativeWaitChoice;
  switch_models?: boolean;
  time_zone?: string;
}

interface RawConfig {
  providers?: (string | RawEntry)[];
  failover?: boolean;
  auto_detect?: boolean;
  cooldown_minutes?: number;
  ceiling?: Level;
  quiet_seconds?: number;
  dismiss_seconds?: number;
  command_key?: string;
  scrollback?: number;
  handoff_workspace?: boolean;
  rotate_at_percent_left?: number;
  receiver_seconds?: number;
  wait?: boolean;
  wait_max_hours?: number;
  return_home?: boolean;
  notify?: boolean;
  notify_command?: string[];
  paid_usage?: PaidUsage;
  packs?: string[];
  replaces?: Record<string, string>;
  redact?: string[];
  shared_rests?: string;
}

export interface ConfigOptions {
  configDir: string;
  configFile?: string;
  cwd?: string;
  env?: Env;
  // read the user's file (true) or take the defaults (false); merge the project's config (true) or not
  user?: boolean;
  project?: boolean;
}

const PROJECT_KEYS = new Set(["$schema", "providers", "failover", "quiet_seconds", "dismiss_seconds", "ceiling"]);

// Loads config.json (or --config FILE) and merges a project's config over it without widening anything.
export async function loadConfig(options: ConfigOptions): Promise<Config> {
  const env = options.env ?? process.env;
  const userFile = options.configFile ?? join(options.configDir, "config.json");
  const user = options.user === false ? {} : await readUserConfig(userFile, options.configFile !== undefined);
  const entries = toEntries(user.providers ?? [], env);
  const sharedRests = sharedStore(user, userFile, env);
  const config: Config = {
    entries,
    failover: user.failover ?? true,
    autoDetect: user.auto_detect ?? true,
    cooldownMinutes: user.cooldown_minutes ?? 300,
    ceiling: user.ceiling ?? "ask",
    ceilingFrom: user.ceiling === undefined ? "default" : "config",
    projectCeiling: undefined,
    quietSeconds: user.quiet_seconds ?? 1.5,
    dismissSeconds: user.dismiss_seconds ?? 20,
    commandKey: user.command_key ?? "ctrl-]",
    scrollback: user.scrollback ?? 5000,
    handoffWorkspace: user.handoff_workspace ?? false,
    rotateAtPercentLeft: user.rotate_at_percent_left,
    receiverSeconds: user.receiver_seconds ?? 60,
    wait: user.wait ?? false,
    waitMaxHours: user.wait_max_hours ?? 24,
    returnHome: user.return_home ?? false,
    notify: user.notify ?? true,
    notifyCommand: user.notify_command?.map((arg) => expandHome(arg, env)),
    paidUsage: user.paid_usage ?? "never",
    packs: user.packs ?? [],
    replaces: user.replaces ?? {},
    redact: compileRedactions(user.redact ?? []),
    sharedRests,
    secrets: [...entries.flatMap((entry) => [...Object.values(entry.env), ...credentialArgs(entry.args)]), ...(sharedRests?.secrets ?? [])],
    userFile,
    projectFile: undefined,
    notes: [],
  };
  if (options.project === false) return config;
  const project = await findProjectConfig(options.cwd ?? process.cwd());
  for (const file of project.ignored) config.notes.push(`${file}: a project config that runs code is never loaded; ignored (put its settings in .uuldanarc.json or .uuldanarc.yaml)`);
  if (project.found) applyProject(config, project.found.config, project.found.filepath);
  return config;
}

// The account an entry's allowance belongs to: its own "account", else its key. Rests are kept by account.
export function accountOf(entry: Pick<Entry, "key" | "account">): string {
  return entry.account ?? entry.key;
}

// The keys of the entries whose allowance is the account's.
export function entriesOfAccount(entries: readonly Pick<Entry, "key" | "account">[], account: string): string[] {
  return entries.filter((entry) => accountOf(entry) === account).map((entry) => entry.key);
}

// --- internal ---

// The shared rest store: UULDANA_SHARED_RESTS over the user's shared_rests (a project's config never sets it).
function sharedStore(user: RawConfig, file: string, env: Env): SharedStoreUrl | undefined {
  const fromEnv = env.UULDANA_SHARED_RESTS;
  if (fromEnv) return parseSharedUrl(fromEnv, "UULDANA_SHARED_RESTS");
  return user.shared_rests === undefined ? undefined : parseSharedUrl(user.shared_rests, file);
}

// The user's redact patterns, compiled: checkUserConfig has made sure each one is a regular expression.
function compileRedactions(patterns: string[]): RegExp[] {
  return patterns.map((pattern) => new RegExp(pattern, "g"));
}

async function readUserConfig(file: string, required: boolean): Promise<RawConfig> {
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    if (error.missing && !required) return {};
    if (error.missing) {
      throw new UuldanaError("E_CONFIG_UNREADABLE", `cannot read config ${file} (ENOENT)`, { hint: "check the path given to --config" });
    }
    // "is a folder", "is a named pipe", "is a symbolic link that loops": something other than a file is there
    const notAFile = error.reason.startsWith("is ");
    const hint = !notAFile ? error.fix : required ? `give --config a JSON file; ${error.fix}` : `config.json must be a JSON file: ${error.fix} (without it uuldana uses its defaults)`;
    throw new UuldanaError("E_CONFIG_UNREADABLE", `cannot read config ${file}: it ${error.reason}`, { hint, cause: error.cause });
  }
  const data = parseJson(text, file);
  // the schema, two entries with one key, a redact pattern that is no regular expression: as `uuldana config` checks
  checkUserConfig(data, file);
  return data as RawConfig;
}


// Each item of the user's providers as an entry; checkUserConfig has made sure no two share a key.
function toEntries(items: (string | RawEntry)[], env: Env): Entry[] {
  const entries: Entry[] = [];
  items.forEach((item) => {
    const raw: RawEntry = typeof item === "string" ? { id: item } : item;
    const key = raw.name ?? raw.id;
    const expandedEnv = Object.fromEntries(Object.entries(raw.env ?? {}).map(([k, v]) => [k, expandHome(v, env)]));
    entries.push({
      key,
      id: raw.id,
      ...(raw.name ? { name: raw.name } : {}),
      ...(raw.account ? { account: raw.account } : {}),
      env: expandedEnv,
      args: (raw.args ?? []).map((arg) => expandHome(arg, env)),
      ...(raw.rotate_at_percent_left !== undefined ? { rotateAtPercentLeft: raw.rotate_at_percent_left } : {}),
      ...(raw.native_wait !== undefined ? { nativeWait: raw.native_wait } : {}),
      ...(raw.switch_models ? { switchModels: true } : {}),
      ...(raw.time_zone ? { timeZone: raw.time_zone } : {}),
      origin: "config",
    });
  });
  return entries;
}

// A project may reorder or restrict, never widen; whatever it may not set is reported and ignored.
function applyProject(config: Config, data: unknown, file: string): void {
  const note = (text: string): void => void config.notes.push(`${file}: ${text}`);
  // what a project may not set is reported and ignored before anything is checked, so a key added later (or one a
  // cloned repository made up) never stops uuldana; what it may set is checked as strictly as the user's own
  const isObject = typeof data === "object" && data !== null && !Array.isArray(data);
  const allowed = isObject ? Object.fromEntries(Object.entries(data).filter(([key]) => PROJECT_KEYS.has(key))) : data;
  if (isObject) {
    for (const key of Object.keys(data)) {
      if (PROJECT_KEYS.has(key)) continue;
      // a key of config.json has a description in its schema; a project naming one it may not set is told so
      note(describePointer("config", `/${key}`) !== undefined ? `"${key}" can only be set in your own config.json; ignored` : `"${key}" is not a setting uuldana knows; ignored`);
    }
  }
  checkSchema(allowed, file);
  const project = allowed as RawConfig & Record<string, unknown>;
  config.projectFile = file;
  // a project's ceiling only ever lowers: ceilingInForce weighs it against the ceiling the session starts from
  if (project.ceiling !== undefined) config.projectCeiling = project.ceiling;
  if (project.failover === false) config.failover = false;
  else if (project.failover === true && !config.failover) note(`"failover": true would turn on what you turned off; ignored`);
  if (project.quiet_seconds !== undefined) config.quietSeconds = project.quiet_seconds;
  if (project.dismiss_seconds !== undefined) config.dismissSeconds = project.dismiss_seconds;
  if (project.providers) config.entries = reorderEntries(config, project.providers, note);
}

function reorderEntries(config: Config, items: (string | RawEntry)[], note: (text: string) => void): Entry[] {
  const byKey = new Map(config.entries.map((entry) => [entry.key, entry]));
  const result: Entry[] = [];
  const used = new Set<string>();
  items.forEach((item, index) => {
    if (typeof item !== "string") {
      note(`providers[${index}] is an entry object; a project may only name entries or provider ids; ignored`);
      return;
    }
    if (used.has(item)) {
      note(`providers[${index}] names "${item}" a second time; ignored`);
      return;
    }
    const listed = byKey.get(item);
    if (listed) result.push(listed);
    else if (config.autoDetect) result.push({ key: item, id: item, env: {}, args: [], origin: "project" });
    else {
      note(`providers[${index}] names "${item}", which is not in your providers list and auto_detect is off; ignored`);
      return;
    }
    used.add(item);
  });
  return result;
}

// One item of the priority list.
export interface Entry {
  key: string;
  id: string;
  name?: string;
  // the account its allowance belongs to, when the user named one (accountOf gives the key otherwise)
  account?: string;
  env: Record<string, string>;
  args: string[];
  // the entry's own rotate_at_percent_left, over the config's
  rotateAtPercentLeft?: number;
  // what uuldana does when the agent offers to wait for its reset or switch its own model, over the manifest's default
  nativeWait?: NativeWaitChoice;
  // at a per-model limit, switch to another model inside the same agent before failing over
  switchModels?: boolean;
  // the zone the agent prints times in (its endpoint's vendor's), over the manifest's time_zone
  timeZone?: string;
  origin: "config" | "project" | "detected";
}

// At an agent's own wait or switch: uuldana leaves it and moves on, or lets the agent wait (or switch) by itself.
export type NativeWaitChoice = "failover" | "allow";
