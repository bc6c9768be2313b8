// Removes terminal escape sequences (CSI, OSC and two-byte escapes) from text.
export function stripEscapes(text: string): string {
  if (!text.includes("\x1b")) return text;
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g, "");
}
