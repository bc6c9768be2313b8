import type { UuldanaError } from "../base/errors.js";
import type { Level } from "../config/levels.js";
import type { ExitSteps } from "../host/stop.js";

export type PromptMode = "argv" | "flag" | "typed" | "none";

export interface LevelFlags {
  args?: string[];
  env?: Record<string, string>;
}

// A provider manifest as validated against schemas/manifest.schema.json.
export interface Manifest {
  $schema?: string;
  // the provider API version it was written for; absent means 1
  api?: number;
  id: string;
  name: string;
  executables: string[];
  // the npm package the CLI ships in: its package.json gives the version when the executable is one of its bins
  npm_package?: string;
  version: { args: string[]; pattern: string; timeout_seconds?: number };
  // how its flags and wording were checked: against the real CLI ("binary") or from documentation only
  verified?: "binary" | "documentation";
  // "manual": a session never moves by itself from one entry of this provider to another (the vendor's terms)
  account_switch?: "manual";
  args?: string[];
  prompt?: { mode: PromptMode; flag?: string; ready?: string };
  levels?: Partial<Record<Level, LevelFlags>>;
  // flags that change what the CLI may do; an entry's args or the arguments after -- may carry only the level's own
  permission_flags?: string[];
  // flags that set one configuration value (key=value), and the keys among those values that change what it may do
  permission_settings?: { flags: string[]; keys: string[] };
  // the CLI takes the beginning of a long flag for the flag (Python's argparse does)
  abbreviated_flags?: boolean;
  // environment variables the CLI reads as permission settings; an entry's env may not set them
  permission_env?: string[];
  exit?: ExitSteps;
  limit_phrases?: string[];
  // the IANA zone the agent's messages print times in (a vendor that prints its own country's time)
  time_zone?: string;
  // how the agent draws its own notices: a limit line drawn otherwise is its assistant's prose
  notice_style?: { colors?: (number | string)[]; bold?: boolean; inverse?: boolean };
  // regular expressions matched against one line: the agent's own interface, and its sign of working
  chrome?: string[];
  busy?: string[];
  // how the CLI holds a user who has not signed in: the lines of its sign-in screens, and what signs it in (a command
  // to run, or the CLI itself when it signs in only inside itself); and how an account that is set up shows
  sign_in?: SignIn;
  // lines of a screen that asks the user something before work other than signing in (trust this folder, a theme)
  asks?: string[];
  account_env?: Record<string, string>;
  resume?: { args: string[] };
  // the CLI's tools can read a file outside the folder it runs in (the handoff's saved transcript) at every level
  reads_outside_project?: boolean;
  // how the caller chooses the CLI's session id (a UUID, {id} in the arguments): its transcript is then found by it;
  // not given when the run's arguments hold one of the flags in unless (the CLI's own ways of picking a session)
  session_id?: { args: string[]; unless?: string[] };
  // the models the CLI offers, the flag that picks one, and how to switch in place at a per-model limit: the keys to
  // type ({model} for its name), the models to switch to, and whether the CLI then sends the refused request again
  models?: { names?: string[]; flag?: string; switch_keys?: string[]; switch_to?: string[]; retries?: boolean };
  // what the agent does at a limit by itself (the lines it shows while it waits for its reset, or after it switched
  // its own model), and what uuldana does then by default
  native_wait?: { waits?: string[]; ends?: string[]; switches?: string[]; default: "failover" | "allow" };
  // lines that say the agent was told to wrap up because its window is nearly spent: a warning, not a stop
  wrap_up?: string[];
  quota?: { source: string; settings_flag?: string };
  adapter?: string;
}

// How a CLI holds a user who has not signed in, and how uuldana tells, without starting it, whether one has.
export interface SignIn {
  screen?: string[];
  command?: string;
  // the folder files are relative to: a variable's value when set, else the default ("~" when none is given)
  home?: { env?: string; default?: string };
  // files kept once an account is set up; with line, a line in the file; with unsure, a line that means "cannot tell"
  files?: SignInFile[];
  // platforms on which the login may be in the system's keychain, so missing files tell nothing
  keychain?: NodeJS.Platform[];
  // variables that sign the CLI in by themselves; "A+B" needs both
  env?: string[];
  // a command whose exit status says whether the CLI is signed in (0: yes); run by preflight only
  status?: { args: string[]; timeout_seconds?: number };
}

export interface SignInFile {
  path: string;
  line?: string;
  unsure?: boolean;
}

// Where a manifest came from: uuldana's own, the config dir's providers/ folder, or a pack as "pack <name>@<version>".
export type ManifestSource = "built-in" | "drop-in" | `pack ${string}`;

// The pack a manifest came from ("<name>@<version>"), or undefined for a built-in or drop-in one.
export function packOf(source: ManifestSource): string | undefined {
  return source.startsWith("pack ") ? source.slice("pack ".length) : undefined;
}

// A provider as messages name it: its id, and the pack it came from when it came from one.
export function providerLabel(id: string, source: ManifestSource): string {
  const pack = packOf(source);
  return pack ? `provider "${id}" (pack ${pack})` : `provider "${id}"`;
}

// A manifest file as found by the registry: valid (manifest set) or broken (error set).
export interface ManifestRecord {
  file: string;
  source: ManifestSource;
  // the source of the manifest of the same id this one replaced (a drop-in over a built-in, say)
  replaces?: ManifestSource;
  manifest?: Manifest;
  error?: UuldanaError;
}
