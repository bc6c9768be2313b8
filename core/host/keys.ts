// Named keys a manifest may write in braces among the keys to type, and the bytes they send.
const NAMED_KEYS: Record<string, string> = {
  enter: "\r",
  escape: "\x1b",
  tab: "\t",
  "ctrl-c": "\x03",
  "ctrl-d": "\x04",
  pause: "",
};

export type KeyStep = { kind: "text"; text: string } | { kind: "key"; name: string; bytes: string };

export function keyNames(): string[] {
  return Object.keys(NAMED_KEYS);
}

// Reads one step of a manifest's key list: "{enter}" is a key, anything else is text; undefined for an unknown key.
export function parseKeyStep(step: string): KeyStep | undefined {
  const named = /^\{([^{}]+)\}$/.exec(step);
  if (!named) return { kind: "text", text: step };
  const bytes = NAMED_KEYS[named[1]!];
  return bytes === undefined ? undefined : { kind: "key", name: named[1]!, bytes };
}

// The bytes a terminal sends for the command key ("ctrl-]"): the classic control byte, and the form a terminal uses
// once an agent has turned on the kitty keyboard protocol.
export function commandKeyBytes(name: string): { byte: number; kitty: string } {
  const char = name.slice("ctrl-".length);
  const code = char.charCodeAt(0);
  const byte = /[a-z]/.test(char) ? code - 96 : code ^ 0x40;
  return { byte, kitty: `\x1b[${code};5u` };
}
