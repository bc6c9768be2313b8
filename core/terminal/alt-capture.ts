// Full-screen agents keep no scrollback on the alternate screen: lines that leave it are collected as they go.
export class AltCapture {
  private sessions: { at: number; lines: string[] }[] = [];
  private current: { at: number; lines: string[] } | undefined;
  private previous: string[] = [];
  private stable = new Set<string>();
  private lastRegion: string[] | undefined;

  begin(normalLength: number): void {
    this.current = { at: normalLength, lines: [] };
    this.sessions.push(this.current);
    this.previous = [];
    this.stable = new Set();
    this.lastRegion = undefined;
  }

  // Called at every line feed with the scroll region's rows: when they moved up by one, the top row left.
  // (The bottom row is still blank at a line feed, so it is left out of the comparison.)
  lineFeed(region: string[]): void {
    const last = this.lastRegion;
    this.lastRegion = region;
    if (!this.current || !last || last.length !== region.length || region.length < 3) return;
    for (let y = 0; y < region.length - 2; y++) if (region[y] !== last[y + 1]) return;
    if (last[0]!.trim()) this.keep(last[0]!);
  }

  // Called with each new screen: a line shown on two screens in a row that is then gone is kept, unless the line
  // that replaced it merely extends it (typing).
  observe(screen: string[]): void {
    if (!this.current) return;
    const now = new Set(screen);
    // a screen wiped whole (as before leaving it) was the last one: all of it is kept
    const wiped = screen.every((line) => !line.trim());
    for (const [y, line] of this.previous.entries()) {
      if (!line.trim() || now.has(line)) continue;
      const successor = screen[y] ?? "";
      if (!wiped && (!this.stable.has(line) || successor.startsWith(line) || line.startsWith(successor))) continue;
      this.keep(line);
    }
    this.stable = new Set(screen.filter((line) => this.previous.includes(line)));
    this.previous = screen;
  }

  end(lastScreen: string[]): void {
    if (!this.current) return;
    // an agent that clears its screen in the same output that leaves it: what was last seen is kept first
    const now = new Set(lastScreen);
    for (const line of this.previous) if (line.trim() && !now.has(line)) this.keep(line);
    for (const line of lastScreen) if (line.trim()) this.keep(line);
    this.current = undefined;
  }

  // The normal buffer's lines with each alternate-screen session's lines where it began.
  merge(normal: string[], liveScreen: string[] | undefined): string[] {
    const result: string[] = [];
    let from = 0;
    for (const session of this.sessions) {
      const at = Math.min(session.at, normal.length);
      result.push(...normal.slice(from, at), ...session.lines);
      if (session === this.current && liveScreen) {
        result.push(...liveScreen.filter((line) => line.trim() && !session.lines.slice(-liveScreen.length).includes(line)));
      }
      from = at;
    }
    result.push(...normal.slice(from));
    return result;
  }

  private keep(line: string): void {
    const lines = this.current!.lines;
    if (lines.slice(-50).includes(line)) return;
    lines.push(line);
  }
}
