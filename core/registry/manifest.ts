import { stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFile } from "../base/files.js";
import { parseJson } from "../base/json.js";
import { keyNames, parseKeyStep } from "../host/keys.js";
import { compilePhrase } from "../reader/phrases.js";
import { checkLinePattern, LINE_PATTERN_ALLOWED } from "./patterns.js";
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
    const issues = await checkManifest(data, file);
    if (issues.length > 0) return { file, source, error: manifestError(file, issues) };
    return { file, source, manifest: data as Manifest };
  } catch (error) {
    if (error instanceof UuldanaError) return { file, source, error };
    throw error;
  }
}

// Schema validation plus the checks a schema cannot express: regular expressions (line patterns that could backtrack
// for long among them), key names, the adapter file.
async function checkManifest(data: unknown, file: string): Promise<Issue[]> {
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
  const lineFields = [
    ["chrome", manifest.chrome],
    ["busy", manifest.busy],
    ["native_wait/waits", manifest.native_wait?.waits],
    ["native_wait/switches", manifest.native_wait?.switches],
  ] as const;
  for (const [field, patterns] of lineFields) {
    patterns?.forEach((pattern, i) => {
      const problem = checkLinePattern(pattern);
      if (!problem) return;
      const pointer = `/${field}/${i}`;
      issues.push({ pointer, message: problem.message, value: pattern, allowed: LINE_PATTERN_ALLOWED, hint: problem.hint ?? describePointer("manifest", pointer) });
    });
  }
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
