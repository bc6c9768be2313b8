// The git working tree a handoff leaves behind, told to the next agent: its branch, a short status and the size of
// the uncommitted changes — never the changes themselves. git is asked with a repository's own config kept from
// running any program (fsmonitor, filters, hooks, external diffs, text conversions, lazy fetches), without taking
// the index lock, and within a time budget; file names are shown with their control characters escaped.
import { spawnSync } from "node:child_process";

import { escapeControls } from "../base/safe-text.js";

export interface WorkspaceOptions {
  // the whole reading's budget; each git call gets what is left of it
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_TIMEOUT_MS = 2000;
// lines of the status and of the changes' summary shown at most; the counts and totals cover every file
const SHOWN = 20;
// a file name longer than this is shown by its end
const NAME_CHARS = 100;
// the most the lines may take together, in UTF-8 bytes; fewer lines are listed until they fit
const MAX_BYTES = 8192;
// the most of git's answer read per call
const READ_BYTES = 4 * 1024 * 1024;
const BAR = 30;

const HEADER = "The git workspace at the handoff (paths from the repository's root; the changes themselves are not included):";

// What the repository's own config could otherwise run, turned off on every call; filter drivers are added by name.
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "diff.external=",
  "diff.autoRefreshIndex=false",
  "protocol.allow=never",
];

// Variables that point git at another repository than the folder's own.
const LOCATING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_IMPLICIT_WORK_TREE", "GIT_NAMESPACE"];

// The handoff preamble's lines on the git working tree at cwd; undefined outside one (no repository, bare, in .git) or without git.
export function workspaceState(cwd: string, options: WorkspaceOptions = {}): string | undefined {
  const budget = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + budget;
  const env = gitEnv(options.env ?? process.env);
  const late = `${HEADER}\nIt could not be read within ${seconds(budget)}.`;
  const git = (args: string[], config: string[] = []): GitAnswer => runGit(cwd, [...SAFE_CONFIG, ...config].flatMap((item) => ["-c", item]).concat(args), env, deadline);

  const where = git(["rev-parse", "--is-inside-work-tree"]);
  if (where.missing || where.code !== 0 || where.out.toString("utf8").trim() !== "true") return undefined;

  const drivers = git(["config", "-z", "--name-only", "--get-regexp", "^filter\\."]);
  if (drivers.timedOut) return late;
  const names = filterDrivers(drivers.out);
  const odd = names.find((name) => name.includes("="));
  if (odd !== undefined) return `${HEADER}\nIt was not read: the repository's config declares a filter named "${escapeControls(odd)}", which uuldana cannot turn off.`;
  const filters = names.flatMap((name) => [`filter.${name}.clean=`, `filter.${name}.smudge=`, `filter.${name}.process=`, `filter.${name}.required=false`]);

  const answer = git(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", "--ignore-submodules=dirty", "--no-ahead-behind"], filters);
  if (answer.timedOut && answer.out.length === 0) return late;
  if (answer.code !== 0 && !answer.timedOut && !answer.cut) return `${HEADER}\nIt could not be read: git status failed.`;
  const status = parseStatus(answer.out, answer.timedOut || answer.cut);

  let changes: Changes | undefined;
  if (status.staged + status.unstaged + status.conflicted > 0) {
    const base = status.oid === undefined ? ["--cached"] : ["HEAD"];
    const diff = git(["diff", "--numstat", "-z", "--no-relative", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty", ...base, "--"], filters);
    changes = diff.code === 0 || diff.timedOut || diff.cut ? parseNumstat(diff.out, diff.timedOut || diff.cut) : { files: [], partial: true, failed: true };
    if (diff.timedOut && changes.files.length === 0) changes = { files: [], partial: true, late: true };
  }

  for (let shown = SHOWN; ; shown = Math.max(0, shown - 5)) {
    const text = render(status, changes, shown, budget);
    if (Buffer.byteLength(text, "utf8") <= MAX_BYTES || shown === 0) return text;
  }
}

// --- internal ---

interface GitAnswer {
  code: number | null;
  out: Buffer;
  missing: boolean;
  timedOut: boolean;
  // more than READ_BYTES came, and the rest was left
  cut: boolean;
}

function runGit(cwd: string, args: string[], env: NodeJS.ProcessEnv, deadline: number): GitAnswer {
  const left = deadline - Date.now();
  if (left <= 0) return { code: null, out: Buffer.alloc(0), missing: false, timedOut: true, cut: false };
  const result = spawnSync("git", ["--no-pager", ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "ignore"],
    timeout: Math.max(1, left),
    killSignal: "SIGKILL",
    maxBuffer: READ_BYTES,
    windowsHide: true,
  });
  const code = (result.error as NodeJS.ErrnoException | undefined)?.code;
  return {
    code: result.status,
    out: result.stdout ?? Buffer.alloc(0),
    missing: code === "ENOENT" || code === "EACCES",
    timedOut: code === "ETIMEDOUT",
    cut: code === "ENOBUFS",
  };
}

function gitEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of LOCATING) delete env[name];
  return { ...env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", GIT_NO_LAZY_FETCH: "1", GIT_PAGER: "cat" };
}

// The names of the filter drivers any config declares ("filter.<name>.<key>", NUL-terminated).
function filterDrivers(out: Buffer): string[] {
  const names = new Set<string>();
  for (const key of out.toString("utf8").split("\0")) {
    const last = key.lastIndexOf(".");
    if (key.startsWith("filter.") && last > "filter.".length) names.add(key.slice("filter.".length, last));
  }
  return [...names];
}

interface Status {
  branch: string | undefined;
  // undefined before the first commit
  oid: string | undefined;
  lines: string[];
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
  partial: boolean;
}

// git status --porcelain=v2 -z: headers, then one record per path, a rename's or copy's with the old path after it.
function parseStatus(out: Buffer, partial: boolean): Status {
  const status: Status = { branch: undefined, oid: undefined, lines: [], staged: 0, unstaged: 0, untracked: 0, conflicted: 0, partial };
  const records = out.toString("utf8").split("\0");
  // the last piece is whatever followed the last NUL: empty, or a record cut short
  records.pop();
  // changed paths in path order as git status --short lists them (porcelain v2 puts conflicts last), then untracked
  const tracked: { path: string; line: string }[] = [];
  const untracked: string[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.startsWith("# branch.oid ")) {
      const oid = record.slice("# branch.oid ".length);
      status.oid = oid === "(initial)" ? undefined : oid;
    } else if (record.startsWith("# branch.head ")) {
      const head = record.slice("# branch.head ".length);
      status.branch = head === "(detached)" ? undefined : head;
    } else if (record.startsWith("? ")) {
      status.untracked++;
      untracked.push(`?? ${shownName(record.slice(2))}`);
    } else if (record.startsWith("1 ") || record.startsWith("2 ") || record.startsWith("u ")) {
      const kind = record[0]!;
      const fields = kind === "1" ? 8 : kind === "2" ? 9 : 10;
      const path = afterFields(record, fields);
      const xy = record.slice(2, 4);
      if (kind === "u") status.conflicted++;
      else {
        if (xy[0] !== ".") status.staged++;
        if (xy[1] !== ".") status.unstaged++;
      }
      const code = xy.replace(/\./g, " ");
      if (kind === "2") {
        const from = records[++i];
        if (from === undefined) break;
        tracked.push({ path, line: `${code} ${shownName(from)} -> ${shownName(path)}` });
      } else tracked.push({ path, line: `${code} ${shownName(path)}` });
    }
  }
  tracked.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  status.lines = [...tracked.map((entry) => entry.line), ...untracked];
  return status;
}

// What follows the first `count` space-separated fields of a record: the path, which may hold spaces.
function afterFields(record: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count; n++) at = record.indexOf(" ", at) + 1;
  return record.slice(at);
}

interface ChangedFile {
  name: string;
  added: number | undefined;
  deleted: number | undefined;
}

interface Changes {
  files: ChangedFile[];
  partial: boolean;
  failed?: boolean;
  late?: boolean;
}

// git diff --numstat -z: "added<TAB>deleted<TAB>path" NUL-terminated, or for a rename an empty path then the old
// and the new path; "-" counts for a binary file.
function parseNumstat(out: Buffer, partial: boolean): Changes {
  const files: ChangedFile[] = [];
  const fields = out.toString("utf8").split("\0");
  fields.pop();
  for (let i = 0; i < fields.length; i++) {
    const [added, deleted, ...rest] = fields[i]!.split("\t");
    if (deleted === undefined) continue;
    let name = rest.join("\t");
    if (name === "") {
      const from = fields[++i];
      const to = fields[++i];
      if (from === undefined || to === undefined) break;
      name = `${shownName(from)} => ${shownName(to)}`;
    } else name = shownName(name);
    files.push({ name, added: added === "-" ? undefined : Number(added), deleted: deleted === "-" ? undefined : Number(deleted) });
  }
  return { files, partial };
}

function render(status: Status, changes: Changes | undefined, shown: number, budget: number): string {
  const lines = [HEADER, `Branch: ${branchWords(status)}`];
  const atLeast = status.partial ? "at least " : "";
  const counts = [`${status.staged} staged`, `${status.unstaged} unstaged`, `${status.untracked} untracked`];
  if (status.conflicted > 0) counts.push(`${status.conflicted} with conflicts`);
  const clean = status.lines.length === 0 && !status.partial;
  lines.push(clean ? "Status: clean" : `Status: ${atLeast}${counts.join(", ")}${status.partial ? " (only part of git status could be read)" : ""}`);
  lines.push(...listed(status.lines.slice(0, shown), status.lines.length));
  if (changes) {
    const title = status.oid === undefined ? "Staged changes (there is no commit yet):" : "Uncommitted changes against the last commit:";
    if (changes.late) lines.push(`${title} could not be read within ${seconds(budget)}`);
    else if (changes.failed) lines.push(`${title} could not be read (git diff failed)`);
    else {
      lines.push(title, ...listed(statLines(changes.files.slice(0, shown)), changes.files.length), `  ${totals(changes)}`);
    }
  }
  return lines.join("\n");
}

function branchWords(status: Status): string {
  if (status.branch === undefined) return status.oid === undefined ? "none, no commit yet" : `none, a detached HEAD at ${status.oid.slice(0, 12)}`;
  const name = escapeControls(status.branch);
  return status.oid === undefined ? `${name}, no commit yet` : name;
}

// The lines shown, indented, and how many more of `total` there are.
function listed(shown: string[], total: number): string[] {
  const lines = shown.map((line) => `  ${line}`);
  return total > shown.length ? [...lines, `  … and ${total - shown.length} more`] : lines;
}

// One line a file, as git diff --stat draws it: name, count of changed lines, a bar of + and -.
function statLines(shown: ChangedFile[]): string[] {
  const width = Math.max(0, ...shown.map((file) => [...file.name].length));
  const counts = shown.map((file) => (file.added === undefined || file.deleted === undefined ? "Bin" : String(file.added + file.deleted)));
  const countWidth = Math.max(0, ...counts.map((count) => count.length));
  const most = Math.max(0, ...shown.map((file) => (file.added ?? 0) + (file.deleted ?? 0)));
  const scale = (n: number): number => (most <= BAR || n === 0 ? n : Math.max(1, Math.round((n * BAR) / most)));
  return shown.map((file, i) => {
    const name = file.name + " ".repeat(width - [...file.name].length);
    const bar = file.added === undefined ? "" : ` ${"+".repeat(scale(file.added))}${"-".repeat(scale(file.deleted ?? 0))}`;
    return `${name} | ${counts[i]!.padStart(countWidth)}${bar}`.trimEnd();
  });
}

function totals(changes: Changes): string {
  const added = changes.files.reduce((sum, file) => sum + (file.added ?? 0), 0);
  const deleted = changes.files.reduce((sum, file) => sum + (file.deleted ?? 0), 0);
  const n = changes.files.length;
  const parts = [`${n} ${n === 1 ? "file" : "files"} changed`];
  if (added > 0 || deleted === 0) parts.push(`${added} ${added === 1 ? "insertion" : "insertions"}(+)`);
  if (deleted > 0 || added === 0) parts.push(`${deleted} ${deleted === 1 ? "deletion" : "deletions"}(-)`);
  return `${changes.partial ? "at least " : ""}${parts.join(", ")}${changes.partial ? " (only part of git diff could be read)" : ""}`;
}

// A file name from git, shown as text: control characters escaped, a long one by its end.
function shownName(name: string): string {
  const chars = [...escapeControls(name)];
  return chars.length <= NAME_CHARS ? chars.join("") : `…${chars.slice(-(NAME_CHARS - 1)).join("")}`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
