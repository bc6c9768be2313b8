import { UuldanaError } from "../base/errors.js";

// What YAML's parser says of a project config, as uuldana says it of JSON: the file with line and column, and for a
// key given twice, both places (the parser names only the second).

interface Mark {
  line: number;
  column: number;
  position: number;
}

// The error for a YAML text the parser refused; anything else it threw (a text nested too deep for it) too.
export function yamlError(file: string, text: string, error: unknown): UuldanaError {
  const { reason, mark } = error as { reason?: unknown; mark?: Mark };
  if (typeof reason !== "string" || !mark) {
    return new UuldanaError("E_YAML_SYNTAX", `${file}: cannot be read as YAML`, {
      details: [`  ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`],
      hint: "no uuldana file needs more than a few plain settings: check that this is the file you meant",
    });
  }
  const at = `${file}:${mark.line + 1}:${mark.column + 1}`;
  if (reason === "duplicated mapping key") return duplicateKey(at, text, mark);
  return new UuldanaError("E_YAML_SYNTAX", `${at}: invalid YAML`, {
    details: [`  ${reason}`],
    hint: "fix the YAML at that line and column (indentation, a missing colon or an unclosed bracket or quote is the usual cause)",
  });
}

// --- internal ---

function duplicateKey(at: string, text: string, mark: Mark): UuldanaError {
  const key = /^("[^"\n]*"|'[^'\n]*'|[^\s:,{}[\]]+)/.exec(text.slice(mark.position))?.[1] ?? "";
  const name = key.replace(/^["']|["']$/g, "");
  const first = firstPlace(text, mark, key);
  const second = `${mark.line + 1}:${mark.column + 1}`;
  return new UuldanaError("E_YAML_SYNTAX", `${at}: duplicate key "${name}"`, {
    details: [`  given ${first ? `at ${first} and again at ${second}` : `again at ${second}`}; YAML allows a key once in a mapping, so uuldana does not guess which you meant`],
    hint: `keep one of the two "${name}" keys and remove the other`,
  });
}

// Where the same key was first given in the same mapping: a line above at the same indentation (before the mapping
// began), or earlier on the same line in a flow mapping ({a: 1, a: 2}).
function firstPlace(text: string, mark: Mark, key: string): string | undefined {
  const lines = text.split("\n");
  const own = lines[mark.line] ?? "";
  const before = own.slice(0, mark.column);
  const inline = new RegExp(`(^|[{,\\s])${escape(key)}\\s*:`).exec(before);
  if (inline) return `${mark.line + 1}:${inline.index + inline[1]!.length + 1}`;
  for (let line = mark.line - 1; line >= 0; line--) {
    const content = lines[line]!;
    if (content.trim() === "" || content.trimStart().startsWith("#")) continue;
    const indent = content.length - content.trimStart().length;
    const itemStart = /^(\s*-\s+)/.exec(content)?.[1]?.length;
    if ((indent === mark.column || itemStart === mark.column) && content.slice(mark.column).startsWith(key) && /^\s*:/.test(content.slice(mark.column + key.length))) {
      return `${line + 1}:${mark.column + 1}`;
    }
    if (indent < mark.column && itemStart !== mark.column) return undefined;
  }
  return undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
