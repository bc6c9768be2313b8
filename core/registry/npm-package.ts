import { realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

import { FileProblem, readRegularFile } from "../base/files.js";

// a CLI's package.json is a few kilobytes; anything near this is not one
const MAX_PACKAGE_JSON = 256 * 1024;
// the version npm itself accepts for a published package, short enough to show in a table
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const MAX_VERSION = 64;

// The version of the npm package an executable ships in, read from its package.json without starting it: only when
// the executable resolves (through links) to a file that package lists under "bin"; undefined for anything else.
export async function readPackageVersion(executable: string, packageName: string): Promise<string | undefined> {
  let target: string;
  try {
    target = await realpath(executable);
  } catch {
    return undefined;
  }
  // the nearest package.json that names a package owns the file; one without a name only sets its folder's module type
  for (let dir = dirname(target); dir !== dirname(dir) && basename(dir) !== "node_modules"; dir = dirname(dir)) {
    const found = await readPackageJson(join(dir, "package.json"));
    if (found === "absent" || (found !== "unreadable" && found.name === undefined)) continue;
    if (found === "unreadable" || found.name !== packageName || !listsBin(found.bin, dir, target)) return undefined;
    const version = found.version;
    return typeof version === "string" && version.length <= MAX_VERSION && SEMVER.test(version) ? version : undefined;
  }
  return undefined;
}

// --- internal ---

async function readPackageJson(file: string): Promise<Record<string, unknown> | "absent" | "unreadable"> {
  let text: string;
  try {
    text = await readRegularFile(file, MAX_PACKAGE_JSON);
  } catch (error) {
    return error instanceof FileProblem && error.missing ? "absent" : "unreadable";
  }
  try {
    const data: unknown = JSON.parse(text);
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : "unreadable";
  } catch {
    return "unreadable";
  }
}

// "bin" is one path (the command named after the package) or an object of command names to paths.
function listsBin(bin: unknown, dir: string, target: string): boolean {
  const paths = typeof bin === "string" ? [bin] : typeof bin === "object" && bin !== null ? Object.values(bin) : [];
  return paths.some((path) => typeof path === "string" && resolve(dir, path) === target);
}
