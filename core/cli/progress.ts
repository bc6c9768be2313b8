// How long a command runs before its progress line is shown: a quick answer (probes read from the cache) shows none.
const SHOW_AFTER_MS = 250;

// Runs a command's work with one line on stderr saying what it does, when stderr is a terminal and the work takes
// long enough to notice; the line is erased when the work ends, so only the command's own output stays.
export async function withProgress<T>(line: string, work: () => Promise<T>, stderr: NodeJS.WriteStream = process.stderr): Promise<T> {
  if (!stderr.isTTY) return work();
  let shown = false;
  const timer = setTimeout(() => {
    shown = true;
    // cut to the terminal's width: a wrapped line would not be erased whole
    stderr.write([...line].slice(0, Math.max(1, (stderr.columns || 80) - 1)).join(""));
  }, SHOW_AFTER_MS);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    if (shown) stderr.write("\r\x1b[2K");
  }
}
