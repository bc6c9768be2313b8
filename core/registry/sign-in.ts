import { statSync } from "node:fs";
import { join, resolve } from "node:path";

import { readRegularFileSync } from "../base/files.js";
import { expandHome, type Env } from "../base/paths.js";
import { compileLinePatterns } from "./patterns.js";
import type { Manifest, SignInFile } from "./types.js";

// Whether an entry's CLI has an account set up, told from the files it keeps and the environment it would start with
// — never by starting it — as its manifest's sign_in describes them. Cheap enough for every providers list.

// What the files and environment say: signed in (true), not (false), or nothing uuldana can tell (null), and why.
export interface SignInReading {
  signedIn: boolean | null;
  // what showed it, as the end of a sentence: "ANTHROPIC_API_KEY is set", "found no /home/ada/.codex/auth.json"
  because: string;
}

// At most this much of a file is read to look for a line in it.
const MAX_READ = 1024 * 1024;

// Whether the CLI of an entry is signed in, with the entry's own env over the environment uuldana runs in (its
// second account's folder, its own key): true, false, or null where the manifest cannot tell.
export function signedIn(entry: { env: Readonly<Record<string, string>> }, manifest: Pick<Manifest, "sign_in">, env: Env, platform: NodeJS.Platform = process.platform): boolean | null {
  return readSignIn(entry, manifest, env, platform).signedIn;
}

// The same answer with what showed it.
export function readSignIn(entry: { env: Readonly<Record<string, string>> }, manifest: Pick<Manifest, "sign_in">, env: Env, platform: NodeJS.Platform = process.platform): SignInReading {
  const signIn = manifest.sign_in;
  const merged: Env = { ...env, ...entry.env };
  const set = (signIn?.env ?? []).find((names) => names.split("+").every((name) => Boolean(merged[name])));
  if (set !== undefined) return { signedIn: true, because: `${set.split("+").join(" and ")} ${set.includes("+") ? "are" : "is"} set` };
  const files = signIn?.files ?? [];
  if (files.length === 0) return { signedIn: null, because: signIn?.env?.length ? `none of ${signIn.env.join(", ")} is set, and its manifest names no file that shows a sign-in` : "its manifest does not say how to tell" };
  const home = homeOf(signIn?.home, merged);
  let unsure: string | undefined;
  for (const file of files) {
    const path = join(home, file.path);
    const found = findIn(path, file);
    if (found && !file.unsure) return { signedIn: true, because: file.line === undefined ? `${path} exists` : `${path} has a line matching ${file.line}` };
    if (found) unsure ??= `${path} has a line matching ${file.line}, so its login may be kept where uuldana cannot look`;
  }
  if (unsure) return { signedIn: null, because: unsure };
  // the files themselves, not the settings files whose lines could also have shown a sign-in
  const kept = files.filter((file) => !file.unsure && file.line === undefined);
  const looked = `found no ${[...new Set((kept.length ? kept : files).map((file) => join(home, file.path)))].join(" or ")}`;
  const unset = signIn?.env?.length ? ` and none of ${signIn.env.join(", ")} is set` : "";
  if (signIn?.keychain?.includes(platform)) return { signedIn: null, because: `${looked}, but on ${platform} its login may be in the system keychain` };
  return { signedIn: false, because: `${looked}${unset}` };
}

// Why an entry cannot start when it is not signed in, with the command that signs it in.
export function notSignedInReason(manifest: Pick<Manifest, "sign_in">): string {
  const command = manifest.sign_in?.command;
  return command ? `not signed in: run "${command}"` : "not signed in";
}

// --- internal ---

// The folder files are relative to: the variable's value when set, else the default, else the user's home.
function homeOf(home: { env?: string; default?: string } | undefined, env: Env): string {
  const named = home?.env ? env[home.env] : undefined;
  if (named) return resolve(expandHome(named, env));
  return expandHome(home?.default ?? "~", env);
}

// Whether a file is there (a regular file, or a link to one) and, when a line is asked for, holds one that matches.
function findIn(path: string, file: SignInFile): boolean {
  try {
    const info = statSync(path);
    if (!info.isFile()) return false;
    if (file.line === undefined) return true;
    if (info.size > MAX_READ) return false;
    const matches = compileLinePatterns([file.line]);
    return readRegularFileSync(path).split(/\r?\n/).some(matches);
  } catch {
    return false;
  }
}
