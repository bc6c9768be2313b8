import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join } from "node:path";

import { stripEscapes } from "../base/ansi.js";
import type { Env } from "../base/paths.js";
import type { Level } from "../config/levels.js";
import { describeOutput, readProbeCache, runProbe, writeProbeCache } from "./probe.js";
import type { Manifest } from "./types.js";

// The flags uuldana gives a CLI when it starts it, and whether the CLI's own --help lists them: a CLI that dropped or
// renamed one would refuse to start, or start at another level, at the moment it should take over.

// One flag uuldana passes, and the manifest field it comes from ("args", "levels.ask.args", "models.flag").
export interface LaunchFlag {
  flag: string;
  from: string;
}

// What "<cli> --help" said: the flags it names, or why it could not say.
export type HelpAnswer = { flags: ReadonlySet<string>; problem?: undefined } | { flags?: undefined; problem: string };

export interface HelpOptions {
  env: Env;
  cacheDir: string;
}

// One executable to ask, at the version uuldana read for it (null: not recognised).
export interface HelpQuery {
  path: string;
  version: string | null;
}

interface CachedHelp {
  flags?: string[];
  problem?: string;
}

const HELP_TIMEOUT_SECONDS = 10;
// the longest help seen is about 16 KB; a CLI that prints more is cut here, never read without end
const HELP_MAX_OUTPUT = 256 * 1024;

// The flags a start at this level passes, each once, in the order of the command line: the manifest's own args, the
// level's, those that set the CLI's session id, the prompt's, the model's and the run's settings file's.
export function launchFlags(manifest: Manifest, level: Level | null): LaunchFlag[] {
  const found: LaunchFlag[] = [];
  const add = (args: readonly string[] | undefined, from: string): void => {
    for (const arg of args ?? []) {
      if (!/^--?[A-Za-z0-9]/.test(arg)) continue;
      const flag = arg.split("=")[0]!;
      if (!found.some((known) => known.flag === flag)) found.push({ flag, from });
    }
  };
  add(manifest.args, "args");
  if (level) add(manifest.levels?.[level]?.args, `levels.${level}.args`);
  add(manifest.session_id?.args, "session_id.args");
  if (manifest.prompt?.mode === "flag") add([manifest.prompt.flag ?? ""], "prompt.flag");
  add([manifest.models?.flag ?? ""], "models.flag");
  add([manifest.quota?.settings_flag ?? ""], "quota.settings_flag");
  return found;
}

// Runs "<cli> --help" for each executable, as many at once as there are processors, each in an empty temporary
// folder, and reads the flags it names. Answers are cached by the executable's path and version, so only a new or updated CLI is asked again (one
// that gave no answer in time, or whose version is not known, is asked again next time).
export async function readHelpFlags(executables: readonly HelpQuery[], options: HelpOptions): Promise<Map<string, HelpAnswer>> {
  const cacheFile = join(options.cacheDir, "help.json");
  const cache = await readProbeCache<CachedHelp>(cacheFile);
  let cacheChanged = false;
  const answers = new Map<string, HelpAnswer>();
  const toAsk: [string, HelpQuery][] = [];
  for (const [key, executable] of new Map(executables.map((executable) => [helpKey(executable.path, executable.version), executable]))) {
    const cached = executable.version === null ? undefined : cache[key];
    if (cached?.flags) answers.set(key, { flags: new Set(cached.flags) });
    else if (typeof cached?.problem === "string") answers.set(key, { problem: cached.problem });
    else toAsk.push([key, executable]);
  }
  // a CLI's bound is measured from its own start: one that starts while many others take the processors would be
  // given less than its due
  const ask = async (): Promise<void> => {
    for (let next = toAsk.shift(); next; next = toAsk.shift()) {
      const [key, { path, version }] = next;
      const { answer, lasting } = await askHelp(path, options.env);
      answers.set(key, answer);
      if (version !== null && lasting) {
        cache[key] = answer.flags ? { flags: [...answer.flags].sort() } : { problem: answer.problem };
        cacheChanged = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, ask));
  if (cacheChanged) await writeProbeCache(options.cacheDir, cacheFile, cache);
  return answers;
}

// The key of one executable's answer in what readHelpFlags returns.
export function helpKey(path: string, version: string | null): string {
  return `${path}\0${version ?? ""}`;
}

// Every word of a help text that is written as a flag ("-m", "--model", "--config" of "--config=<file>").
export function flagsInHelp(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--?[A-Za-z0-9][\w-]*/g)].map((match) => match[0].replace(/-+$/, "")));
}

// --- internal ---

// One "<cli> --help"; an answer that lasts is the same for as long as the CLI is: one that timed out or could not
// start may be different next time.
async function askHelp(path: string, env: Env): Promise<{ answer: HelpAnswer; lasting: boolean }> {
  const cwd = await mkdtemp(join(tmpdir(), "uuldana-help-"));
  let probe;
  try {
    probe = await runProbe(path, ["--help"], { env, timeoutSeconds: HELP_TIMEOUT_SECONDS, maxOutput: HELP_MAX_OUTPUT, cwd });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  const command = `"${basename(path)} --help"`;
  if (probe.timedOut) return { answer: { problem: `${command} gave no answer within ${HELP_TIMEOUT_SECONDS} s` }, lasting: false };
  if (probe.exitCode === null && probe.output.startsWith("cannot start: ")) return { answer: { problem: `${command} ${probe.output}` }, lasting: false };
  const output = stripEscapes(probe.output);
  const flags = flagsInHelp(output);
  if (probe.exitCode !== 0) return { answer: { problem: `${command} ${describeOutput(output)} and exited with ${probe.exitCode ?? "a signal"}` }, lasting: true };
  if (flags.size === 0) return { answer: { problem: `${command} ${describeOutput(output)}, which names no flag` }, lasting: true };
  return { answer: { flags }, lasting: true };
}
