import { UuldanaError } from "../base/errors.js";
import { LEVELS, levelRank, type Level } from "../config/levels.js";
import type { Manifest } from "./types.js";

// An entry's own args and the arguments after -- must not start an agent at another level than the one uuldana
// names: a permission flag there (one the manifest lists in permission_flags, or one any of its levels passes) is
// refused unless it is exactly the running level's own, value included. Equivalent spellings (-s for --sandbox, a
// value that asks for less) are refused too: the simplest rule that cannot be talked round.

// The first argument that carries a permission flag other than the level's own, as written, or undefined.
export function strayPermissionFlag(args: readonly string[], manifest: Manifest, level: Level): string | undefined {
  const read = permissionReader(manifest);
  const own = read(manifest.levels?.[level]?.args ?? []);
  const stray = read(args).find(
    (found) => found.grouped || !own.some((mine) => mine.flag === found.flag && mine.value === found.value),
  );
  return stray?.text;
}

// One permission flag (or setting) found among arguments.
export interface Occurrence {
  flag: string;
  value: string | undefined;
  // a short flag grouped with others (-dy): its value cannot be told
  grouped: boolean;
  // the arguments it took, as written
  text: string;
}

// Reads arguments as a CLI would, for the permission flags and settings one manifest knows of it: those it lists in
// permission_flags and permission_settings, and every flag any of its levels passes.
export function permissionReader(manifest: Manifest): (args: readonly string[]) => Occurrence[] {
  const flags = new Set(manifest.permission_flags ?? []);
  const withValue = new Set<string>();
  for (const own of LEVELS.map((name) => manifest.levels?.[name]?.args ?? [])) {
    own.forEach((arg, i) => {
      if (!arg.startsWith("-")) return;
      const name = arg.split("=")[0]!;
      flags.add(name);
      if (arg.includes("=") || (own[i + 1] !== undefined && !own[i + 1]!.startsWith("-"))) withValue.add(name);
    });
  }
  const settings = manifest.permission_settings;
  const abbreviated = manifest.abbreviated_flags === true;
  return (list) => [...occurrences(list, flags, withValue, abbreviated), ...(settings ? settingOccurrences(list, settings) : [])];
}

// The first variable of an entry's env that the CLI reads as a permission setting (the manifest's permission_env).
export function strayPermissionEnv(env: Readonly<Record<string, string>>, manifest: Manifest): string | undefined {
  const names = new Set(manifest.permission_env ?? []);
  return Object.keys(env).find((name) => names.has(name));
}

// Why an entry whose env sets a permission variable is refused.
export function strayEnvReason(name: string, manifest: Manifest, level: Level): string {
  const fix = canGoHigher(manifest, level) ? `remove it, and raise "ceiling" in config.json to let it do more` : `remove it: ${level} is the most ${manifest.id} enforces`;
  return `refused: its "env" sets ${name}, which ${manifest.id} reads as a permission setting; ${fix}`;
}

// Why an entry whose own args carry a permission flag is refused, for providers list and run's skip lines.
export function strayFlagReason(flag: string, manifest: Manifest, level: Level): string {
  const fix = canGoHigher(manifest, level) ? `remove it, and raise "ceiling" in config.json to let it do more` : `remove it: ${level} is the most ${manifest.id} enforces`;
  return `refused: its "args" carry the permission flag "${flag}", which is not its level's own (${level}: ${levelFlags(manifest, level)}); ${fix}`;
}

// The usage error for a permission flag among the arguments after --.
export function strayFlagError(flag: string, entry: string, manifest: Manifest, level: Level, configFile: string): UuldanaError {
  return new UuldanaError("E_PERMISSION_FLAG", `the arguments after -- carry the permission flag "${flag}", which is not the level's own (${entry} at ${level}: ${levelFlags(manifest, level)})`, {
    hint: canGoHigher(manifest, level)
      ? `remove it; to let agents do more, run with --ceiling, or raise "ceiling" in ${configFile}`
      : `remove it: ${level} is the most ${manifest.id} enforces`,
  });
}

// --- internal ---

function occurrences(args: readonly string[], flags: ReadonlySet<string>, withValue: ReadonlySet<string>, abbreviated = false): Occurrence[] {
  const found: Occurrence[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("-") || arg === "-" || arg === "--") continue;
    const equals = arg.indexOf("=");
    const name = equals === -1 ? arg : arg.slice(0, equals);
    let hit: Omit<Occurrence, "text"> | undefined;
    // a CLI that takes the beginning of a long flag for the flag (--yes-al for --yes-always) is read the same way
    const whole = flags.has(name) ? name : abbreviated && name.startsWith("--") && name.length >= 4 ? [...flags].find((flag) => flag.startsWith(name)) : undefined;
    if (whole) hit = { flag: whole, value: equals === -1 ? undefined : arg.slice(equals + 1), grouped: false };
    else if (arg[1] !== "-") {
      // short flags, grouped or with their value attached: -y, -dy, -sread-only, -s=read-only
      const letters = /^-([A-Za-z0-9]+)/.exec(arg)?.[1] ?? "";
      const at = [...letters].findIndex((letter) => flags.has(`-${letter}`));
      if (at === 0) hit = { flag: `-${letters[0]}`, value: arg.length > 2 ? arg.slice(2).replace(/^=/, "") : undefined, grouped: false };
      else if (at > 0) hit = { flag: `-${letters[at]}`, value: undefined, grouped: true };
    }
    if (!hit) continue;
    if (hit.value === undefined && !hit.grouped && withValue.has(hit.flag) && i + 1 < args.length) {
      found.push({ ...hit, value: args[i + 1], text: `${arg} ${args[i + 1]}` });
      i++;
    } else found.push({ ...hit, text: arg });
  }
  return found;
}

// "-c sandbox_mode=danger-full-access", "--config=approval_policy=never": a setting flag whose value sets one of the
// keys that change what the CLI may do (a dotted key counts by its first part), in every spelling of the flag.
function settingOccurrences(args: readonly string[], settings: { flags: string[]; keys: string[] }): Occurrence[] {
  const found: Occurrence[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    for (const flag of settings.flags) {
      let value: string | undefined;
      let text = arg;
      if (arg === flag && i + 1 < args.length) {
        value = args[i + 1]!;
        text = `${arg} ${value}`;
      } else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
      else if (!flag.startsWith("--") && arg.startsWith(flag) && arg.length > flag.length) value = arg.slice(flag.length);
      if (value === undefined) continue;
      const key = value.replace(/^["'\s]+/, "").split(/[\s.=]/)[0]!;
      if (settings.keys.includes(key)) found.push({ flag: `${flag} ${key}`, value, grouped: false, text });
      if (text !== arg) i++;
      break;
    }
  }
  return found;
}

function levelFlags(manifest: Manifest, level: Level): string {
  const flags = manifest.levels?.[level];
  const shown = [...(flags?.args ?? []), ...Object.keys(flags?.env ?? {}).map((name) => `${name}=…`)];
  return shown.length ? shown.join(" ") : "no flags";
}

function canGoHigher(manifest: Manifest, level: Level): boolean {
  return LEVELS.some((other) => levelRank(other) > levelRank(level) && manifest.levels?.[other] !== undefined);
}
