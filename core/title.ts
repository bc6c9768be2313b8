// Rewrites the agent's own title sequences (OSC 0, 1 and 2) into uuldana's status line; every other byte passes
// untouched. A sequence split across chunks is held back until it is complete.
const ESC = 0x1b;
const OSC = 0x5d;
const BEL = 0x07;
const MAX_HELD = 4096;

export type TitleFormat = (agentTitle: string) => string;

export class TitleFilter {
  private held: Buffer | undefined;
  agentTitle = "";

  constructor(private readonly format: TitleFormat) {}

  // Returns what to write now; bytes of an unfinished sequence stay held for the next chunk.
  filter(chunk: Buffer): Buffer {
    let data = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = undefined;
    if (data.indexOf(ESC) === -1) return data;
    const parts: Buffer[] = [];
    let from = 0;
    let at = data.indexOf(ESC);
    while (at !== -1) {
      if (at === data.length - 1) {
        this.hold(data, at, parts, from);
        return Buffer.concat(parts);
      }
      if (data[at + 1] !== OSC) {
        at = data.indexOf(ESC, at + 1);
        continue;
      }
      const sequence = readOsc(data, at);
      if (!sequence) {
        if (data.length - at > MAX_HELD) break;
        this.hold(data, at, parts, from);
        return Buffer.concat(parts);
      }
      if (sequence.title !== undefined) {
        parts.push(data.subarray(from, at));
        this.agentTitle = clean(sequence.title);
        parts.push(Buffer.from(`\x1b]${sequence.kind};${this.format(this.agentTitle)}\x07`));
        from = sequence.end;
      }
      at = data.indexOf(ESC, sequence.end);
    }
    if (from === 0) return data;
    parts.push(data.subarray(from));
    data = Buffer.concat(parts);
    return data;
  }

  // Whatever is held back, released as it is (used when no more output comes for a while).
  flush(): Buffer | undefined {
    const held = this.held;
    this.held = undefined;
    return held;
  }

  get holding(): boolean {
    return this.held !== undefined;
  }

  private hold(data: Buffer, at: number, parts: Buffer[], from: number): void {
    parts.push(data.subarray(from, at));
    this.held = Buffer.from(data.subarray(at));
  }
}

// --- internal ---

function readOsc(data: Buffer, at: number): { kind: string; title?: string; end: number } | undefined {
  for (let i = at + 2; i < data.length; i++) {
    const byte = data[i];
    if (byte === BEL || (byte === ESC && data[i + 1] === 0x5c)) {
      const body = data.subarray(at + 2, i).toString("utf8");
      const end = byte === BEL ? i + 1 : i + 2;
      const semicolon = body.indexOf(";");
      const kind = semicolon === -1 ? body : body.slice(0, semicolon);
      if (kind === "0" || kind === "1" || kind === "2") return { kind, title: body.slice(semicolon + 1), end };
      return { kind, end };
    }
    if (byte === ESC && i + 1 >= data.length) return undefined;
  }
  return undefined;
}

// A title may not carry control characters into uuldana's own title.
function clean(title: string): string {
  return title.replace(/[\x00-\x1f\x7f-\x9f]/g, "").slice(0, 200);
}
