import { escapeControls } from "./safe-text.js";

// One error type for everything uuldana reports to the user; only the CLI prints it.
export type ErrorCode =
  | "E_USAGE"
  | "E_JSON_SYNTAX"
  | "E_JSON_DUPLICATE_KEY"
  | "E_CONFIG_INVALID"
  | "E_CONFIG_DUPLICATE_ENTRY"
  | "E_CONFIG_UNREADABLE"
  | "E_MANIFEST_INVALID"
  | "E_MANIFEST_UNREADABLE"
  | "E_ADAPTER_LOAD"
  | "E_ADAPTER_INVALID"
  | "E_PTY_UNAVAILABLE"
  | "E_NO_ELIGIBLE_ENTRY"
  | "E_AGENT_START"
  | "E_COOLDOWNS_UNREADABLE"
  | "E_COOLDOWNS_LOCKED";

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

// The text printed on stderr for an error: the message, its details, then the fix. Each is one line, and the values
// they quote from files (a bad value, a path) are shown with their control characters escaped.
export function formatError(error: UuldanaError): string {
  const lines = [`uuldana: ${error.message}`];
  for (const detail of error.details) lines.push(detail);
  if (error.hint) lines.push(`hint: ${error.hint}`);
  return lines.map(escapeControls).join("\n") + "\n";
}

// The text printed for a failure that is uuldana's own fault: never a stack trace, always what to do.
export function formatInternalError(error: unknown): string {
  const message = escapeControls(error instanceof Error ? error.message : String(error));
  return `uuldana: internal error: ${message}\nhint: this is a bug in uuldana; please report it with the command you ran\n`;
}
