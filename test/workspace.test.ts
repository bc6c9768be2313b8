import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { loadConfig } from "../core/config/config.js";
import { workspaceState } from "../core/session/workspace.js";
import { makeSandbox, type Sandbox } from "./helpers.js";

const HEADER = "The git workspace at the handoff (paths from the repository's root; the changes themselves are not included):";

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "uuldana-workspace-"));
  // git sees no config of this machine's, and looks for no repository above the test's folder
  env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CEILING_DIRECTORIES: dirname(dir),
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.com",
  };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// git as a user would run it, with the test's environment (and so every program a repository's config names).
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function write(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

// A repository with one commit of README.md and src/app.ts, on main.
function repository(name = "repo"): string {
  const repo = join(dir, name);
  mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  write(join(repo, "README.md"), "one\ntwo\n");
  write(join(repo, "src", "app.ts"), "a\nb\nc\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "init");
  return repo;
}

// A script that leaves a marker file when something runs it; a filter's passes its input through.
function markerScript(name: string, passThrough = false): { script: string; marker: string } {
  const marker = join(dir, `${name}-ran`);
  const script = write(join(dir, "scripts", name), `#!/bin/sh\ntouch '${marker}'\n${passThrough ? "exec cat\n" : "exit 0\n"}`);
  chmodSync(script, 0o755);
  return { script, marker };
}

const state = (cwd: string, options: { timeoutMs?: number } = {}): string | undefined => workspaceState(cwd, { env, ...options });
// A budget for the large repositories: git alone can take longer than a session's 2 s on a loaded machine, and then
// the state says it could not be read in time (which the budget test checks).
const LOADED_MS = 30_000;

describe("workspaceState", () => {
  it("gives the branch, the counts, the short status and the changed-line counts of staged and unstaged changes", () => {
    const repo = repository();
    write(join(repo, "README.md"), "one\nTWO\n");
    write(join(repo, "src", "app.ts"), "a\nB\nC\nd\n");
    git(repo, "add", "src/app.ts");
    write(join(repo, "notes.txt"), "n\n");
    write(join(repo, "scratch", "x"), "x\n");
    const expected = [
      HEADER,
      "Branch: main",
      "Status: 1 staged, 1 unstaged, 2 untracked",
      "   M README.md",
      "  M  src/app.ts",
      "  ?? notes.txt",
      "  ?? scratch/",
      "Uncommitted changes against the last commit:",
      "  README.md  | 2 +-",
      "  src/app.ts | 5 +++--",
      "  2 files changed, 4 insertions(+), 3 deletions(-)",
    ].join("\n");
    expect(state(repo)).toBe(expected);
    // from a subfolder too, with paths still from the root
    expect(state(join(repo, "src"))).toBe(expected);
  });

  it("says a clean tree is clean, and names a detached HEAD by its commit", () => {
    const repo = repository();
    expect(state(repo)).toBe([HEADER, "Branch: main", "Status: clean"].join("\n"));
    const commit = git(repo, "rev-parse", "HEAD").trim();
    git(repo, "checkout", "-q", "--detach");
    write(join(repo, "new.txt"), "x\n");
    expect(state(repo)).toBe([HEADER, `Branch: none, a detached HEAD at ${commit.slice(0, 12)}`, "Status: 0 staged, 0 unstaged, 1 untracked", "  ?? new.txt"].join("\n"));
  });

  it("before the first commit, summarises what is staged", () => {
    const repo = join(dir, "fresh");
    mkdirSync(repo);
    git(repo, "init", "-q", "-b", "trunk");
    expect(state(repo)).toBe([HEADER, "Branch: trunk, no commit yet", "Status: clean"].join("\n"));
    write(join(repo, "a.txt"), "1\n2\n3\n");
    write(join(repo, "b.txt"), "b\n");
    git(repo, "add", "a.txt");
    expect(state(repo)).toBe(
      [
        HEADER,
        "Branch: trunk, no commit yet",
        "Status: 1 staged, 0 unstaged, 1 untracked",
        "  A  a.txt",
        "  ?? b.txt",
        "Staged changes (there is no commit yet):",
        "  a.txt | 3 +++",
        "  1 file changed, 3 insertions(+)",
      ].join("\n"),
    );
  });

  it("shows renames, binary files, deletions and conflicts as git status --short and --stat do", () => {
    const repo = repository();
    write(join(repo, "logo.bin"), "\u0000\u0001\u0002");
    write(join(repo, "both.txt"), "base\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "more");
    git(repo, "checkout", "-q", "-b", "other");
    write(join(repo, "both.txt"), "theirs\n");
    git(repo, "commit", "-q", "-am", "theirs");
    git(repo, "checkout", "-q", "main");
    write(join(repo, "both.txt"), "ours\n");
    git(repo, "commit", "-q", "-am", "ours");
    expect(() => git(repo, "merge", "-q", "other")).toThrow();
    git(repo, "mv", "README.md", "READ-ME.md");
    write(join(repo, "logo.bin"), "\u0000\u0003");
    git(repo, "rm", "-q", "src/app.ts");
    expect(state(repo)).toBe(
      [
        HEADER,
        "Branch: main",
        "Status: 2 staged, 1 unstaged, 0 untracked, 1 with conflicts",
        "  R  README.md -> READ-ME.md",
        "  UU both.txt",
        "   M logo.bin",
        "  D  src/app.ts",
        "Uncommitted changes against the last commit:",
        "  README.md => READ-ME.md |   0",
        "  both.txt                |   4 ++++",
        "  logo.bin                | Bin",
        "  src/app.ts              |   3 ---",
        "  4 files changed, 4 insertions(+), 3 deletions(-)",
      ].join("\n"),
    );
  });

  it("gives nothing outside a working tree: no repository, a bare one, inside .git, no git installed", () => {
    const plain = join(dir, "plain");
    mkdirSync(plain);
    expect(state(plain)).toBeUndefined();
    const bare = join(dir, "bare.git");
    git(dir, "init", "-q", "--bare", bare);
    expect(state(bare)).toBeUndefined();
    const repo = repository();
    expect(state(join(repo, ".git"))).toBeUndefined();
    expect(state(join(repo, ".git", "refs"))).toBeUndefined();
    const empty = join(dir, "empty-bin");
    mkdirSync(empty);
    expect(workspaceState(repo, { env: { ...env, PATH: empty } })).toBeUndefined();
    expect(state(join(dir, "no-such-folder"))).toBeUndefined();
  });

  it("shows file names with a newline, an escape sequence or a tab as text, and a long one by its end", () => {
    const repo = repository();
    const long = `${"d".repeat(150)}.txt`;
    write(join(repo, "line\nbreak.txt"), "x\n");
    write(join(repo, "\u001b[31mred\u001b[0m\u0007"), "x\n");
    write(join(repo, "tab\there"), "x\n");
    write(join(repo, long), "x\n");
    git(repo, "add", "line\nbreak.txt");
    write(join(repo, "\u001b]0;title\u0007"), "x\n");
    const text = state(repo)!;
    expect(text).toBe(
      [
        HEADER,
        "Branch: main",
        "Status: 1 staged, 0 unstaged, 4 untracked",
        "  A  line\\nbreak.txt",
        "  ?? \\u001b[31mred\\u001b[0m\\u0007",
        "  ?? \\u001b]0;title\\u0007",
        `  ?? …${long.slice(-99)}`,
        "  ?? tab\\there",
        "Uncommitted changes against the last commit:",
        "  line\\nbreak.txt | 1 +",
        "  1 file changed, 1 insertion(+)",
      ].join("\n"),
    );
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it("runs nothing a repository's config names: fsmonitor, filters, hooks, external diffs, text conversions", () => {
    const repo = repository();
    write(join(repo, ".gitattributes"), "*.txt filter=evil diff=evil\n*.md filter=Other\n");
    write(join(repo, "a.txt"), "a\n");
    write(join(repo, "b.md"), "b\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "attributes");
    const programs = {
      fsmonitor: markerScript("fsmonitor"),
      filter: markerScript("filter", true),
      process: markerScript("process"),
      hook: markerScript("hook"),
      external: markerScript("external"),
      textconv: markerScript("textconv"),
    };
    git(repo, "config", "core.fsmonitor", programs.fsmonitor.script);
    git(repo, "config", "filter.evil.clean", programs.filter.script);
    git(repo, "config", "filter.evil.required", "true");
    git(repo, "config", "diff.external", programs.external.script);
    git(repo, "config", "diff.evil.textconv", programs.textconv.script);
    write(join(repo, ".git", "hooks", "post-index-change"), `#!/bin/sh\ntouch '${programs.hook.marker}'\n`);
    chmodSync(join(repo, ".git", "hooks", "post-index-change"), 0o755);
    // and a filter driver named in another case, declared through an included file
    write(join(repo, ".git", "more.cfg"), `[filter "Other"]\n\tprocess = ${programs.process.script}\n\trequired = true\n`);
    git(repo, "config", "include.path", "more.cfg");
    const dirty = (): void => {
      write(join(repo, "a.txt"), "changed\n");
      write(join(repo, "b.md"), "changed\n");
      // same content, another time: only a look at the file tells it is unchanged (git refreshes the index for that)
      const later = new Date(Date.now() + 5000);
      utimesSync(join(repo, "README.md"), later, later);
    };

    // git itself runs every one of them here, so the test can fail
    dirty();
    // (a process filter that does not answer its handshake makes git itself fail, with words that depend on when git
    // noticed: that its filter failed is what the message always says, and what ran is what counts)
    const attempt = (...args: string[]): void => void expect(() => git(repo, ...args)).toThrow(/the remote end hung up unexpectedly|filter 'Other' failed|initialization for subprocess/);
    attempt("status");
    attempt("diff", "HEAD");
    const past = ["-c", "filter.Other.process=", "-c", "filter.Other.required=false", "-c", "filter.evil.required=false"];
    git(repo, ...past, "diff", "HEAD");
    git(repo, ...past, "diff", "--no-ext-diff", "HEAD");
    for (const [name, program] of Object.entries(programs)) expect([name, existsSync(program.marker)]).toEqual([name, true]);
    for (const program of Object.values(programs)) rmSync(program.marker);

    dirty();
    const index = join(repo, ".git", "index");
    const before = { bytes: readFileSync(index), mtime: statSync(index).mtimeMs };
    expect(state(repo)).toBe(
      [
        HEADER,
        "Branch: main",
        "Status: 0 staged, 2 unstaged, 0 untracked",
        "   M a.txt",
        "   M b.md",
        "Uncommitted changes against the last commit:",
        "  a.txt | 2 +-",
        "  b.md  | 2 +-",
        "  2 files changed, 2 insertions(+), 2 deletions(-)",
      ].join("\n"),
    );
    for (const [name, program] of Object.entries(programs)) expect([name, existsSync(program.marker)]).toEqual([name, false]);
    // the index was neither locked nor written
    expect(existsSync(join(repo, ".git", "index.lock"))).toBe(false);
    expect({ bytes: readFileSync(index), mtime: statSync(index).mtimeMs }).toEqual(before);
  });

  it("reads nothing when a filter's name cannot be given to git to turn it off", () => {
    const repo = repository();
    const filter = markerScript("odd-filter", true);
    write(join(repo, ".gitattributes"), "*.ts filter=a=b\n");
    git(repo, "config", "filter.a=b.clean", filter.script);
    write(join(repo, "src", "app.ts"), "changed\n");
    expect(state(repo)).toBe(`${HEADER}\nIt was not read: the repository's config declares a filter named "a=b", which uuldana cannot turn off.`);
    expect(existsSync(filter.marker)).toBe(false);
    git(repo, "diff", "HEAD");
    expect(existsSync(filter.marker)).toBe(true);
  });

  it("fetches nothing: in a partial clone, a missing object is not fetched and the upload program its config names does not run", () => {
    const source = repository("source");
    git(source, "config", "uploadpack.allowFilter", "true");
    const clone = join(dir, "clone");
    git(dir, "clone", "-q", "--no-checkout", "--filter=blob:none", `file://${source}`, clone);
    const upload = markerScript("upload-pack");
    write(upload.script, `#!/bin/sh\ntouch '${upload.marker}'\nexec git-upload-pack "$@"\n`);
    git(clone, "config", "remote.origin.uploadpack", upload.script);
    git(clone, "read-tree", "HEAD");
    write(join(clone, "README.md"), "changed\n");
    expect(state(clone)).toBe(
      [
        HEADER,
        "Branch: main",
        "Status: 0 staged, 2 unstaged, 0 untracked",
        "   M README.md",
        // never checked out
        "   D src/app.ts",
        "Uncommitted changes against the last commit: could not be read (git diff failed)",
      ].join("\n"),
    );
    expect(existsSync(upload.marker)).toBe(false);
    // git itself fetches the missing object, through that program
    git(clone, "diff", "--stat", "HEAD");
    expect(existsSync(upload.marker)).toBe(true);
  });

  it("reads an untracked folder of 10,000 files as one line, even when the repository asks for every file", () => {
    const repo = repository();
    git(repo, "config", "status.showUntrackedFiles", "all");
    mkdirSync(join(repo, "big"));
    for (let i = 0; i < 10_000; i++) writeFileSync(join(repo, "big", `f${i}.txt`), "x");
    const text = state(repo, { timeoutMs: LOADED_MS });
    expect(text).toBe([HEADER, "Branch: main", "Status: 0 staged, 0 unstaged, 1 untracked", "  ?? big/"].join("\n"));
  }, 120_000);

  it("lists 20 of 10,000 untracked files and says how many more, in time", () => {
    const repo = repository();
    for (let i = 0; i < 10_000; i++) writeFileSync(join(repo, `f${String(i).padStart(5, "0")}.txt`), "x");
    const text = state(repo, { timeoutMs: LOADED_MS });
    const listed = Array.from({ length: 20 }, (_, i) => `  ?? f${String(i).padStart(5, "0")}.txt`);
    expect(text).toBe([HEADER, "Branch: main", "Status: 0 staged, 0 unstaged, 10000 untracked", ...listed, "  … and 9980 more"].join("\n"));
  }, 120_000);

  it("keeps to 8 KB with long non-ASCII names, listing fewer lines and keeping the counts and totals", () => {
    const repo = repository();
    const names = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, "0")}${"変更".repeat(39)}`);
    for (const name of names) write(join(repo, name), "a\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "many");
    for (const name of names) write(join(repo, name), "b\n");
    const text = state(repo)!;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8192);
    const stat = names.slice(0, 15).map((name) => `  ${name} | 2 +-`);
    expect(text).toBe(
      [
        HEADER,
        "Branch: main",
        "Status: 0 staged, 40 unstaged, 0 untracked",
        ...names.slice(0, 15).map((name) => `   M ${name}`),
        "  … and 25 more",
        "Uncommitted changes against the last commit:",
        ...stat,
        "  … and 25 more",
        "  40 files changed, 40 insertions(+), 40 deletions(-)",
      ].join("\n"),
    );
  });

  it("says the state could not be read in time when git takes longer than the budget", () => {
    const repo = repository();
    const real = execFileSync("sh", ["-c", "command -v git"], { env, encoding: "utf8" }).trim();
    const slow = join(dir, "slow-bin");
    // a git whose status never answers (a huge repository on a slow disk); everything else is the real git
    write(join(slow, "git"), `#!/bin/sh\nfor arg in "$@"; do [ "$arg" = status ] && exec sleep 30; done\nexec '${real}' "$@"\n`);
    chmodSync(join(slow, "git"), 0o755);
    const started = Date.now();
    const text = workspaceState(repo, { env: { ...env, PATH: `${slow}${delimiter}${env.PATH}` }, timeoutMs: 500 });
    const took = Date.now() - started;
    expect(text).toBe(`${HEADER}\nIt could not be read within 0.5 s.`);
    expect(took).toBeGreaterThanOrEqual(450);
    // not git's 30 s: a loaded machine may take a few seconds more to end it
    expect(took).toBeLessThan(10_000);
  });

  it("counts a submodule when its commit moved, never reads inside it, and runs nothing its config names", () => {
    const lib = repository("lib-source");
    const repo = repository();
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib");
    git(repo, "commit", "-q", "-m", "submodule");
    const fsmonitor = markerScript("sub-fsmonitor");
    git(join(repo, "lib"), "config", "core.fsmonitor", fsmonitor.script);
    write(join(repo, "lib", "README.md"), "dirty\n");
    write(join(repo, "lib", "untracked.txt"), "x\n");
    // git itself looks inside it, and runs its fsmonitor
    expect(git(repo, "status", "--short")).toBe(" m lib\n");
    expect(existsSync(fsmonitor.marker)).toBe(true);
    rmSync(fsmonitor.marker);

    expect(state(repo)).toBe([HEADER, "Branch: main", "Status: clean"].join("\n"));
    git(join(repo, "lib"), "commit", "-q", "-am", "moved");
    rmSync(fsmonitor.marker);
    expect(state(repo)).toBe(
      [HEADER, "Branch: main", "Status: 0 staged, 1 unstaged, 0 untracked", "   M lib", "Uncommitted changes against the last commit:", "  lib | 2 +-", "  1 file changed, 1 insertion(+), 1 deletion(-)"].join("\n"),
    );
    expect(existsSync(fsmonitor.marker)).toBe(false);
  });

  it("reads a linked worktree's own branch and changes", () => {
    const repo = repository();
    const tree = join(dir, "feature-tree");
    git(repo, "worktree", "add", "-q", "-b", "feature", tree);
    write(join(tree, "README.md"), "one\ntwo\nthree\n");
    expect(state(tree)).toBe(
      [
        HEADER,
        "Branch: feature",
        "Status: 0 staged, 1 unstaged, 0 untracked",
        "   M README.md",
        "Uncommitted changes against the last commit:",
        "  README.md | 1 +",
        "  1 file changed, 1 insertion(+)",
      ].join("\n"),
    );
    expect(state(repo)).toBe([HEADER, "Branch: main", "Status: clean"].join("\n"));
  });

  it("is about the folder it is given, whatever GIT_DIR and GIT_WORK_TREE say", () => {
    const repo = repository();
    const other = repository("other");
    write(join(other, "x.txt"), "x\n");
    expect(workspaceState(repo, { env: { ...env, GIT_DIR: join(other, ".git"), GIT_WORK_TREE: other } })).toBe([HEADER, "Branch: main", "Status: clean"].join("\n"));
  });
});

describe("handoff_workspace in the config", () => {
  let sandbox: Sandbox;
  beforeEach(() => {
    sandbox = makeSandbox();
  });
  afterEach(() => sandbox.cleanup());
  const load = () => loadConfig({ configDir: sandbox.config, cwd: sandbox.project, env: sandbox.env });

  it("is off unless the user's config.json turns it on", async () => {
    expect((await load()).handoffWorkspace).toBe(false);
    sandbox.write("config/config.json", { handoff_workspace: true });
    expect((await load()).handoffWorkspace).toBe(true);
  });

  it.each([true, false])("a project's config cannot set it (%s): it is reported and ignored", async (value) => {
    sandbox.write("config/config.json", { handoff_workspace: !value });
    const file = sandbox.write("project/.uuldanarc.json", { handoff_workspace: value, ceiling: "read-only" });
    const config = await load();
    expect(config.handoffWorkspace).toBe(!value);
    expect(config.projectCeiling).toBe("read-only");
    expect(config.notes).toEqual([`${file}: "handoff_workspace" can only be set in your own config.json; ignored`]);
  });

  it("exits 2 for a value that is not true or false, with the key's meaning as the hint", async () => {
    const file = sandbox.write("config/config.json", { handoff_workspace: "yes" });
    const run = await sandbox.run(["providers", "list"]);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        `  at /handoff_workspace (handoff_workspace): must be true or false`,
        `    value: "yes"`,
        `    allowed: true or false`,
        `    hint: Put the git branch, a short status and a summary of the uncommitted changes (never the changes themselves) in the handoff prompt; a project's config cannot set it (default false).`,
        "",
      ].join("\n"),
    });
  });
});
