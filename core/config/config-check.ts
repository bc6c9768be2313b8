import { UuldanaError } from "../base/errors.js";
import { describePointer, formatIssues, validateDocument, type Issue } from "../base/schema.js";
import { isTimeZone } from "../reader/wall-clock.js";

// What makes uuldana refuse a user's config.json once it is read as JSON: the schema, two entries of providers with
// one key, a redact pattern that is not a regular expression. The error is the one loading the config gives, so
// `uuldana config` refuses a change with the words a run would have refused the file with.
export function checkUserConfig(data: unknown, file: string): void {
  checkSchema(data, file);
  const config = data as { providers?: unknown[]; redact?: string[] };
  checkEntryKeys(config.providers ?? [], file);
  checkTimeZones(config.providers ?? [], file);
  (config.redact ?? []).forEach((pattern, index) => checkPattern(pattern, index, file));
}

// The schema alone: what a project's config, once cut to the keys it may set, is checked against.
export function checkSchema(data: unknown, file: string): void {
  const issues = validateDocument("config", data);
  if (issues.length > 0) throw invalidConfig(issues, file);
}

// --- internal ---

function invalidConfig(issues: Issue[], file: string): UuldanaError {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  return new UuldanaError("E_CONFIG_INVALID", `invalid config ${file} (${count})`, { details: formatIssues(issues) });
}

// an entry's time_zone must name a zone the system knows: a reset read in a zone that is not would be hours off
function checkTimeZones(items: unknown[], file: string): void {
  const issues: Issue[] = [];
  items.forEach((item, index) => {
    const zone = typeof item === "object" && item !== null ? (item as { time_zone?: unknown }).time_zone : undefined;
    if (typeof zone !== "string" || isTimeZone(zone)) return;
    issues.push({ pointer: `/providers/${index}/time_zone`, message: "is not a time zone this system knows", value: zone, allowed: 'an IANA time zone name, such as "Asia/Shanghai" or "Europe/Berlin"', hint: describePointer("config", "/providers/0/time_zone") });
  });
  if (issues.length) throw invalidConfig(issues, file);
}

// an entry's key is its name, else its provider id; two with one key could not be told apart
function checkEntryKeys(items: unknown[], file: string): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const raw = (typeof item === "string" ? { id: item } : item) as { id: string; name?: string };
    const key = raw.name ?? raw.id;
    const first = seen.get(key);
    if (first === undefined) return void seen.set(key, index);
    const issue: Issue = {
      pointer: `/providers/${index}`,
      message: `"${key}" is already the key of providers[${first}]`,
      value: item,
      hint: describePointer("config", "/providers/0/name"),
    };
    throw new UuldanaError("E_CONFIG_DUPLICATE_ENTRY", `two entries in ${file} have the key "${key}"`, {
      details: formatIssues([issue]),
      hint: `give one of them its own "name", for example {"id": "${raw.id}", "name": "${raw.id}-2"}`,
    });
  });
}

function checkPattern(pattern: string, index: number, file: string): void {
  try {
    new RegExp(pattern, "g");
  } catch (error) {
    const issue: Issue = {
      pointer: `/redact/${index}`,
      message: `is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, "")})`,
      value: pattern,
      allowed: "a JavaScript regular expression",
      hint: describePointer("config", "/redact"),
    };
    throw invalidConfig([issue], file);
  }
}
