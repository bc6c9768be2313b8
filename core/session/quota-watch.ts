import { statSync, watch, type FSWatcher } from "node:fs";
import { dirname } from "node:path";

// Watches the files an agent writes its own quota numbers to, while it runs: the operating system says when one
// changed, nothing is polled, and an idle agent costs nothing. A file is watched through its folder (it may not
// exist yet, and agents replace their files by renaming a new one over them); a folder is watched as it is; a
// folder that does not exist yet is waited for through the nearest one above it that does (a few levels at most).

// How long after a change the reading is taken: an agent writes a line in pieces, or several files at once.
const SETTLE_MS = 100;
// How far up a missing folder is waited for.
const LEVELS_UP = 3;

export class QuotaWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  // paths: files or folders; changed is called once the changes of a moment have settled
  constructor(private readonly paths: readonly string[], private readonly changed: () => void) {
    this.arm();
  }

  // Stops watching; no reading is taken after this.
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  // Watches the folder of each path as far as it exists now.
  private arm(): void {
    for (const path of this.paths) {
      const folder = isFolder(path) ? path : dirname(path);
      const watched = existing(folder);
      if (watched && !this.watchers.has(watched)) this.add(watched);
    }
  }

  private add(folder: string): void {
    try {
      const watcher = watch(folder, { persistent: false }, () => this.soon());
      watcher.on("error", () => {
        watcher.close();
        this.watchers.delete(folder);
      });
      this.watchers.set(folder, watcher);
    } catch {
      // a folder that cannot be watched gives no readings; the printed text still does
    }
  }

  private soon(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      // a folder waited for may exist now
      this.arm();
      this.changed();
    }, SETTLE_MS);
    this.timer.unref();
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

// The folder itself when it exists, else the nearest existing one above it within a few levels.
function existing(folder: string): string | undefined {
  let at = folder;
  for (let level = 0; level <= LEVELS_UP; level++) {
    if (isFolder(at)) return at;
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
  return undefined;
}
