// The most of a line a manifest's line pattern reads: a pattern from a drop-in or a pack meets a bounded text.
export const LINE_PATTERN_READS = 500;

// A manifest's line patterns (chrome, busy) as one test of a line, or undefined when it lists none. The patterns
// were checked when the manifest loaded.
export function compileLinePatterns(patterns: readonly string[] | undefined): ((line: string) => boolean) | undefined {
  if (!patterns?.length) return undefined;
  const compiled = patterns.map((pattern) => new RegExp(pattern));
  return (line) => {
    const head = line.slice(0, LINE_PATTERN_READS);
    return compiled.some((pattern) => pattern.test(head));
  };
}
