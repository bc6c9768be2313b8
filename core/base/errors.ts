import { escapeControls } from "./safe-text.js";

// One error type for everything uuldana reports to the user; only the CLI prints it. Each code names one case, and
// the README lists them all ("Exit codes and error codes").
export type ErrorCode =
  | "E_USAGE"
  | "E_JSON_SYNTAX"
  | "E_JSON_DUPLICATE_KEY"
  | "E_JSON_TOO_DEEP"
  | "E_YAML_SYNTAX"
  | "E_CONFIG_INVALID"
  | "E_CONFIG_DUPLICATE_ENTRY"
  | "E_CONFIG_UNREADABLE"
  | "E_EDITOR"
  | "E_MANIFEST_INVALID"
  | "E_MANIFEST_UNREADABLE"
  | "E_MANIFEST_API"
  | "E_PACK_NOT_INSTALLED"
  | "E_PACK_UNREADABLE"
  | "E_PACK_INVALID"
  | "E_PACK_INSTALL"
  | "E_ADAPTER_LOAD"
  | "E_ADAPTER_INVALID"
  | "E_PERMISSION_FLAG"
  | "E_PTY_UNAVAILABLE"
  | "E_NO_ELIGIBLE_ENTRY"
  | "E_AGENT_START"
  | "E_JOURNAL_UNWRITABLE"
  | "E_SESSIONS_FOLDER_UNUSABLE"
  | "E_SESSION_NOT_RESUMABLE"
  | "E_NOTHING_TO_RESUME"
  | "E_NO_SESSION"
  | "E_REPORT_UNWRITABLE"
  | "E_SESSION_NOT_ORPHANED"
  | "E_COOLDOWNS_UNREADABLE"
  | "E_COOLDOWNS_LOCKED"
  | "E_INTERNAL";

export interface ErrorOptions {
  hint?: string;
  details?: string[];
  exitCode?: number;
  cause?: unknown;
}

export class UuldanaError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: string[];
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "UuldanaError";
    this.code = code;
    this.hint = options.hint;
    this.details = options.details ?? [];
    this.exitCode = options.exitCode ?? 2;
  }
}

// One link of an error's cause chain, as the printer and the --json error object show it.
export interface CauseLink {
  code: ErrorCode | null;
  message: string;
}

// The --json form of an error, printed on stdout by a --json command that fails.
export interface ErrorJson {
  error: { code: ErrorCode; message: string; details: string[]; hint: string | null; cause: CauseLink[] };
}

// The one printer of errors. First line "uuldana: <message> [<code>]" — the place (a file, file:line:column) is in
// the message —, then its details (the JSON pointer of each problem), "hint: " the fix, and "cause: " each cause,
// outermost first. Every line is one line: values quoted from files have their control characters escaped. Anything
// thrown that is not a UuldanaError is shown as an internal error.
export function formatError(error: unknown): string {
  const known = asUuldanaError(error);
  const lines = [`uuldana: ${known.message} [${known.code}]`, ...known.details];
  if (known.hint) lines.push(`hint: ${known.hint}`);
  for (const link of causeChain(known)) lines.push(`cause: ${link.message}${link.code ? ` [${link.code}]` : ""}`);
  return lines.map(escapeControls).join("\n") + "\n";
}

// The text printed for a failure that is uuldana's own fault: never a stack trace, always what to do.
export function formatInternalError(error: unknown): string {
  return formatError(internalError(error));
}

// The error object a --json command prints on stdout when it fails, with the same facts as the printed text.
export function errorJson(error: unknown): ErrorJson {
  const known = asUuldanaError(error);
  return { error: { code: known.code, message: known.message, details: known.details, hint: known.hint ?? null, cause: causeChain(known) } };
}

// The exit code of a failure: the error's own, 70 for one that is uuldana's fault.
export function exitCodeOf(error: unknown): number {
  return asUuldanaError(error).exitCode;
}

// --- internal ---

// a chain longer than this is cut: no real one is, and a cycle would never end
const MAX_CAUSES = 8;

function asUuldanaError(error: unknown): UuldanaError {
  return error instanceof UuldanaError ? error : internalError(error);
}

function internalError(error: unknown): UuldanaError {
  const message = error instanceof Error ? error.message : String(error);
  return new UuldanaError("E_INTERNAL", `internal error: ${message}`, {
    hint: "this is a bug in uuldana; please report it with the command you ran",
    exitCode: 70,
    cause: error instanceof Error ? error.cause : undefined,
  });
}

function causeChain(error: Error): CauseLink[] {
  const chain: CauseLink[] = [];
  const seen = new Set<unknown>([error]);
  let cause = error.cause;
  while (cause !== undefined && cause !== null && !seen.has(cause) && chain.length < MAX_CAUSES) {
    seen.add(cause);
    if (cause instanceof Error) {
      chain.push({ code: cause instanceof UuldanaError ? cause.code : null, message: cause.message || cause.name });
      cause = cause.cause;
    } else {
      chain.push({ code: null, message: describeValue(cause) });
      cause = undefined;
    }
  }
  return chain;
}

// a thrown value that is not an Error: a string as it is, anything else as JSON where it can be
function describeValue(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
