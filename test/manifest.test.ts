import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { fixtures, makeSandbox } from "./helpers.js";

const invalid = join(fixtures, "manifests", "invalid");
const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

// Each fixture breaks exactly one rule; the message names the file, the pointer, the value and the hint.
const cases: [string, string][] = [
  [
    "account-env-bad-name",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /account_env/1ACCOUNT (account_env[\"1ACCOUNT\"]): invalid name \"1ACCOUNT\"\n    allowed: names matching ^[A-Za-z_][A-Za-z0-9_]*$\n    hint: Environment variables that select another account of this CLI (for a second entry), each with what it holds.\n",
  ],
  [
    "adapter-missing",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /adapter (adapter): names a file that does not exist (DIR/stand-in-adapter.js)\n    value: \"./stand-in-adapter.js\"\n    allowed: a path relative to the manifest of an existing .js or .mjs file\n    hint: Path of an optional JavaScript module, relative to this manifest, whose default export is the provider's hooks: for a drop-in a .mjs or .js file beside it (\"./<id>.mjs\"), for a built-in the one compiled from providers/<id>.ts (\"../dist/providers/<id>.js\"); it is imported only when the provider runs.\n",
  ],
  [
    "asks-broken-regex",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /asks/0 (asks[0]): is not a valid regular expression (/[Trust this folder/u: Unterminated character class)\n    value: \"[Trust this folder\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: Lines of a screen on which the CLI asks its user something before it works, other than signing in (trust this folder, a first-run choice such as a colour theme): regular expressions, each matched against one line, written like sign_in.screen for whole lines of the CLI's own interface. An agent started with the conversation that shows one waits for its user.\n",
  ],
  [
    "busy-nested-repetition",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /busy/2 (busy[2]): repeats a group that itself repeats (\"(?:\\w+\\s?)+\"), which can backtrack without end on a line that almost matches\n    value: \"^(?:\\\\w+\\\\s?)+\\\\(esc to interrupt\\\\)\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: repeat only one of the two: \"(?:ab)+\" or \"a+b+\" instead of \"(a+b)+\", \"a+\" instead of \"(a+)+\"\n",
  ],
  [
    "busy-repetition-cut-two-ways",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /busy/0 (busy[0]): repeats a group that can cut the same text into repetitions in more than one way (\"(?:\\.|\\.\\.)+\"), which can backtrack without end on a line that almost matches\n    value: \"Working(?:\\\\.|\\\\.\\\\.)+$\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: let each repetition begin in its own way: \"(?:a|b)+\" instead of \"(?:a|b|ab)+\", \"a+\" instead of \"(?:a{1,3})+\", \"[\\w-]+\" instead of \"(?:\\w|_|-)+\"\n",
  ],
  [
    "busy-repetitions-share-text",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /busy/0 (busy[0]): has repetitions that can share out the same characters (\".*\", \".*\"), which can take about 126 million steps on a 500-character line\n    value: \".*·.*esc to interrupt\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: put a character between them that they cannot both match, drop one (a \".*\" at either end adds nothing: a pattern matches anywhere in the line), or anchor the pattern with ^\n",
  ],
  [
    "chrome-backreference",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /chrome/0 (chrome[0]): refers back to what a group matched (\"\\1\"), which has no bound on how long it takes\n    value: \"^(─+)\\\\1$\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: write the text out again instead of referring back to it\n",
  ],
  [
    "chrome-broken-regex",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /chrome/1 (chrome[1]): is not a valid regular expression (/[unclosed/u: Unterminated character class)\n    value: \"[unclosed\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: Lines that are the agent's own interface, not conversation (banners, footers, hints, input box, status line): regular expressions, each matched against one line (at most its first 500 characters); such lines are left out of the next agent's prompt.\n",
  ],
  [
    "chrome-lookbehind-unbounded",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /chrome/0 (chrome[0]): looks behind for text of unbounded length (\"(?<=^\\s*)\"), which is read again at every position of the line\n    value: \"(?<=^\\\\s*)> \"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: bound the repetition inside the lookbehind (\"{0,20}\" instead of \"*\" or \"+\"), or match that text itself\n",
  ],
  [
    "executable-with-folder",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /executables/0 (executables[0]): does not have the expected form\n    value: \"/usr/bin/stand-in\"\n    allowed: text matching ^[^/\\\\]+$\n    hint: Executable names to look for on PATH, first found wins (for example [\"claude\"]).\n",
  ],
  [
    "exit-signal-kill",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /exit/signals/0 (exit.signals[0]): is not one of the allowed values\n    value: \"SIGKILL\"\n    allowed: \"SIGINT\", \"SIGHUP\", \"SIGTERM\"\n    hint: Signals sent to the process group in turn when the keys did not end it; SIGKILL always follows.\n",
  ],
  [
    "exit-unknown-key",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /exit/keys/1 (exit.keys[1]): names an unknown key\n    value: \"{f1}\"\n    allowed: text, or one of {enter}, {escape}, {tab}, {ctrl-c}, {ctrl-d}, {pause}\n    hint: What to type, in order: text, or a key in braces: {enter}, {escape}, {tab}, {ctrl-c}, {ctrl-d}, {pause}.\n",
  ],
  [
    "id-with-spaces",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /id (id): does not have the expected form\n    value: \"Stand In\"\n    allowed: text matching ^[a-z0-9][a-z0-9-]*$\n    hint: The provider id used in config.json, lower-case letters, digits and dashes (for example \"claude-code\").\n",
  ],
  [
    "npm-package-with-version",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /npm_package (npm_package): does not have the expected form\n    value: \"@stand-in/cli@1.2.3\"\n    allowed: text matching ^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$\n    hint: The npm package the CLI ships in (for example \"@google/gemini-cli\"). When the executable found on PATH resolves, through symbolic links, to a file this package's package.json lists under bin, the version is that package.json's version and the CLI is not started; otherwise the version probe runs.\n",
  ],
  [
    "permission-flag-with-value",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /permission_flags/1 (permission_flags[1]): does not have the expected form\n    value: \"--yolo=true\"\n    allowed: text matching ^-{1,2}[A-Za-z0-9][A-Za-z0-9_-]*$\n    hint: The CLI's flags that change what it may do without asking (permission modes, approvals, sandbox, yolo), long and short. An entry's args or the arguments after -- that carry one of them, or a flag any level passes, are refused unless it is exactly the running level's own, value included; --flag=value and grouped short flags (-dy) are read too.\n",
  ],
  [
    "level-arg-not-string",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /levels/ask/args/1 (levels.ask.args[1]): must be a string\n    value: 1\n    allowed: a string\n    hint: Flags that make the CLI enforce this level.\n",
  ],
  [
    "level-unknown",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /levels/yolo (levels.yolo): unknown key \"yolo\"\n    allowed: \"read-only\", \"ask\", \"auto-edit\", \"full-access\"\n    hint: For each ceiling level the CLI can enforce, the flags that make it enforce that level; a level left out is refused.\n",
  ],
  [
    "limit-phrase-broken-regex",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /limit_phrases/1 (limit_phrases[1]): is not a valid regular expression (/(quota gone/i: Unterminated group)\n    value: \"/(quota gone/i\"\n    allowed: a JavaScript regular expression\n    hint: Extra wording that means this provider's allowance is gone: plain phrases, or regular expressions written /like this/i.\n",
  ],
  [
    "missing-id",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /id (id): missing required key \"id\"\n    hint: The provider id used in config.json, lower-case letters, digits and dashes (for example \"claude-code\").\n",
  ],
  [
    "no-executables",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /executables (executables): has too few items\n    value: []\n    allowed: at least 1 item\n    hint: Executable names to look for on PATH, first found wins (for example [\"claude\"]).\n",
  ],
  [
    "prompt-flag-without-flag",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /prompt/flag (prompt.flag): missing required key \"flag\"\n    hint: The flag that takes the prompt as its value (mode \"flag\"), for example \"-i\".\n",
  ],
  [
    "prompt-typed-without-ready",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /prompt/ready (prompt.ready): missing required key \"ready\"\n    hint: A regular expression that matches the screen once the CLI accepts typing (mode \"typed\").\n",
  ],
  [
    "prompt-unknown-mode",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /prompt/mode (prompt.mode): is not one of the allowed values\n    value: \"stdin\"\n    allowed: \"argv\", \"flag\", \"typed\", \"none\"\n    hint: \"argv\": the prompt is the last argument; \"flag\": the prompt follows a flag; \"typed\": uuldana types it once the ready pattern is on screen; \"none\": no first prompt.\n",
  ],
  [
    "resume-without-args",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /resume/args (resume.args): has too few items\n    value: []\n    allowed: at least 1 item\n    hint: Arguments that resume natively (for example [\"--continue\"]).\n",
  ],
  [
    "sign-in-command-control",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /sign_in/command (sign_in.command): does not have the expected form\n    value: \"stand-in login\\u001b[31m\"\n    allowed: text matching ^[^\\u0000-\\u001f\\u007f-\\u009f]{1,80}$\n    hint: How the user signs the CLI in, as uuldana's messages say it: the command to run in a shell (for example \"codex login\"), or, for a CLI that signs in only inside itself, its own command, which asks at its start (for example \"gemini\"); 1 to 80 characters, no control characters.\n",
  ],
  [
    "sign-in-screen-nested-repetition",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /sign_in/screen/1 (sign_in.screen[1]): repeats a group that itself repeats (\"(?:\\w+ ?)+\"), which can backtrack without end on a line that almost matches\n    value: \"^(?:\\\\w+ ?)+ to sign in$\"\n    allowed: a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of 500 characters\n    hint: repeat only one of the two: \"(?:ab)+\" or \"a+b+\" instead of \"(a+b)+\", \"a+\" instead of \"(a+)+\"\n",
  ],
  [
    "syntax-error",
    "uuldana: FILE:5:1: invalid JSON [E_JSON_SYNTAX]\n  Expected double-quoted property name\nhint: fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause)\n",
  ],
  [
    "unknown-key",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /colour (colour): unknown key \"colour\"\n    allowed: \"$schema\", \"api\", \"id\", \"name\", \"executables\", \"npm_package\", \"verified\", \"account_switch\", \"version\", \"args\", \"prompt\", \"levels\", \"permission_flags\", \"permission_settings\", \"abbreviated_flags\", \"permission_env\", \"exit\", \"limit_phrases\", \"time_zone\", \"notice_style\", \"chrome\", \"busy\", \"native_wait\", \"wrap_up\", \"sign_in\", \"asks\", \"account_env\", \"resume\", \"reads_outside_project\", \"session_id\", \"models\", \"quota\", \"adapter\"\n    hint: Describes one agent CLI to uuldana: how to find it, start it inside a permission level, give it a first prompt and stop it.\n",
  ],
  [
    "version-not-object",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /version (version): must be an object\n    value: \"--version\"\n    allowed: an object\n    hint: How to read the installed version: the arguments to run and the pattern that recognises the output.\n",
  ],
  [
    "version-pattern-broken",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /version/pattern (version.pattern): is not a valid regular expression (/^stand-in (\\d+/: Unterminated group)\n    value: \"^stand-in (\\\\d+\"\n    allowed: a JavaScript regular expression\n    hint: A regular expression that must match the version output; its first capture group is the version.\n",
  ],
  [
    "version-timeout-too-long",
    "uuldana: invalid manifest FILE (1 problem) [E_MANIFEST_INVALID]\n  at /version/timeout_seconds (version.timeout_seconds): is too large\n    value: 120\n    allowed: a number of at most 60\n    hint: How long the version probe may take before it is killed and reported as timed out (default 8).\n",
  ],
];

describe("providers validate", () => {
  it.each(cases)("reports %s exactly", async (name, expected) => {
    const file = join(invalid, `${name}.json`);
    const run = await sandbox.run(["providers", "validate", file]);
    expect(run.stderr).toBe(expected.replaceAll("FILE", file).replaceAll("DIR", invalid));
    expect(run.stdout).toBe("");
    expect(run.code).toBe(1);
  });

  it("has at least 15 invalid fixtures, one broken rule each", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it("accepts every built-in manifest", async () => {
    const run = await sandbox.run(["providers", "validate", join(fixtures, "..", "..", "manifests")]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const ids = run.stdout.trim().split("\n").map((line) => /\((.+)\)$/.exec(line)?.[1]);
    expect(ids).toEqual(["aider", "antigravity", "claude-code", "codex", "copilot", "cursor-agent", "gemini", "opencode", "qwen"]);
  });

  it("validates a folder and reports every invalid file while naming the valid ones", async () => {
    const file = join(fixtures, "manifests", "valid", "stand-in.json");
    const run = await sandbox.run(["providers", "validate", file, join(invalid, "missing-id.json")]);
    expect(run.stdout).toBe(`valid: ${file} (stand-in)\n`);
    expect(run.stderr.split("\n")[0]).toBe(`uuldana: invalid manifest ${join(invalid, "missing-id.json")} (1 problem) [E_MANIFEST_INVALID]`);
    expect(run.code).toBe(1);
  });

  it("exits 2 naming a folder that holds no manifest", async () => {
    const run = await sandbox.run(["providers", "validate", sandbox.path]);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: no manifest files found in ${sandbox.path}: it is a folder with no .json files in it [E_USAGE]\nhint: name manifest files, or folders that hold them\n`,
    });
  });
});
