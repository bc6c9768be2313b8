import { stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFile } from "../base/files.js";
import { parseJson } from "../base/json.js";
import { VERSION } from "../base/version.js";
import { keyNames, parseKeyStep } from "../host/keys.js";
import { compilePhrase } from "../reader/phrases.js";
import { isTimeZone } from "../reader/wall-clock.js";
import { checkLinePattern, compileProblem, LINE_PATTERN_ALLOWED } from "./patterns.js";
import { describePointer, formatIssues, validateDocument, type Issue } from "../base/schema.js";
import type { Manifest, ManifestRecord, ManifestSource } from "./types.js";

// Reads one manifest file; problems are kept on the record, never thrown, so one file cannot hide others.
export async function loadManifestFile(file: string, source: ManifestSource): Promise<ManifestRecord> {
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    const failure = new UuldanaError("E_MANIFEST_UNREADABLE", `cannot read manifest ${file}: it ${error.reason}`, {
      hint: error.missing ? "check that the file exists and is readable" : `a manifest is a .json file: ${error.fix}`,
      exitCode: 1,
      cause: error.cause,
    });
    return { file, source, error: failure };
  }
  try {
    const data = parseJson(text, file);
    const api = apiRefusal(data, file, source);
    if (api) return { file, source, error: api };
    const issues = await checkManifest(data, file, source);
    if (issues.length > 0) return { file, source, error: manifestError(file, issues) };
    return { file, source, manifest: data as Manifest };
  } catch (error) {
    if (error instanceof UuldanaError) return { file, source, error };
    throw error;
  }
}

// The version of the provider API this uuldana reads: a manifest's "api", 1 when it has none.
export const PROVIDER_API = 1;

// A manifest written for another version of the provider API, refused before its fields are read: they may mean
// something else there. Its pack, when it comes from one, is named with its version.
function apiRefusal(data: unknown, file: string, source: ManifestSource): UuldanaError | undefined {
  const api = (data as { api?: unknown } | null)?.api;
  if (typeof data !== "object" || data === null || !Number.isInteger(api) || api === PROVIDER_API || (api as number) < 1) return undefined;
  const from = source.startsWith("pack ") ? `provider pack ${source.slice(5)} needs provider API ${api as number} (manifest ${file})` : `manifest ${file} needs provider API ${api as number}`;
  return new UuldanaError("E_MANIFEST_API", `${from}, and this uuldana (${VERSION}) reads API ${PROVIDER_API}`, {
    hint: source.startsWith("pack ")
      ? `install a version of the pack written for API ${PROVIDER_API} (its README or changelog says which), or a uuldana that reads API ${api as number}`
      : `write it for API ${PROVIDER_API} ("api": ${PROVIDER_API}), or install a uuldana that reads API ${api as number}`,
    exitCode: 1,
  });
}

// Schema validation plus the checks a schema cannot express: regular expressions (line patterns that could backtrack
// for long among them), key names, the adapter file.
// A built-in manifest's line patterns are only compiled when it loads: their cost was judged before they shipped
// (the suite validates manifests/ as a drop-in), and judging it at every start is the slowest part of loading.
async function checkManifest(data: unknown, file: string, source: ManifestSource): Promise<Issue[]> {
  const issues = validateDocument("manifest", data);
  if (issues.length > 0) return issues;
  const manifest = data as Manifest;
  const regex = (pointer: string, pattern: string, compile: (text: string) => RegExp): void => {
    try {
      compile(pattern);
    } catch (error) {
      issues.push({
        pointer,
        message: `is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, "")})`,
        value: pattern,
        allowed: "a JavaScript regular expression",
        hint: describePointer("manifest", pointer),
      });
    }
  };
  const plain = (text: string): RegExp => new RegExp(text);
  regex("/version/pattern", manifest.version.pattern, plain);
  if (manifest.prompt?.ready) regex("/prompt/ready", manifest.prompt.ready, plain);
  manifest.limit_phrases?.forEach((phrase, i) => regex(`/limit_phrases/${i}`, phrase, compilePhrase));
  if (manifest.time_zone !== undefined && !isTimeZone(manifest.time_zone)) {
    issues.push({ pointer: "/time_zone", message: "is not a time zone this system knows", value: manifest.time_zone, allowed: 'an IANA time zone name, such as "Asia/Shanghai" or "Europe/Berlin"', hint: describePointer("manifest", "/time_zone") });
  }
  const lineFields = [
    ["chrome", manifest.chrome],
    ["busy", manifest.busy],
    ["native_wait/waits", manifest.native_wait?.waits],
    ["native_wait/switches", manifest.native_wait?.switches],
    ["sign_in/screen", manifest.sign_in?.screen],
    ["asks", manifest.asks],
  ] as const;
  const linePattern = (pointer: string, pattern: string): void => {
    const problem = source === "built-in" ? compileProblem(pattern) : checkLinePattern(pattern);
    if (problem) issues.push({ pointer, message: problem.message, value: pattern, allowed: LINE_PATTERN_ALLOWED, hint: problem.hint ?? describePointer("manifest", pointer) });
  };
  for (const [field, patterns] of lineFields) patterns?.forEach((pattern, i) => linePattern(`/${field}/${i}`, pattern));
  manifest.sign_in?.files?.forEach((file, i) => {
    if (file.line !== undefined) linePattern(`/sign_in/files/${i}/line`, file.line);
  });
  const keys = (pointer: string, steps: string[] | undefined): void => {
    steps?.forEach((step, i) => {
      if (parseKeyStep(step)) return;
      issues.push({
        pointer: `${pointer}/${i}`,
        message: `names an unknown key`,
        value: step,
        allowed: `text, or one of ${keyNames().map((k) => `{${k}}`).join(", ")}`,
        hint: describePointer("manifest", pointer),
      });
    });
  };
  keys("/exit/keys", manifest.exit?.keys);
  keys("/models/switch_keys", manifest.models?.switch_keys);
  if (manifest.adapter) {
    const adapterFile = resolve(dirname(file), manifest.adapter);
    const found = await stat(adapterFile).then(
      (info) => (info.isFile() ? "file" : "not a file"),
      () => "missing",
    );
    if (found !== "file") {
      issues.push({
        pointer: "/adapter",
        message: found === "missing" ? `names a file that does not exist (${adapterFile})` : `names something that is not a file (${adapterFile})`,
        value: manifest.adapter,
        allowed: "a path relative to the manifest of an existing .js or .mjs file",
        hint: describePointer("manifest", "/adapter"),
      });
    }
  }
  return issues;
}

export function manifestError(file: string, issues: Issue[]): UuldanaError {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  return new UuldanaError("E_MANIFEST_INVALID", `invalid manifest ${file} (${count})`, {
    details: formatIssues(issues),
    exitCode: 1,
  });
}
