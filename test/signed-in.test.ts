import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { readSignIn, signedIn, type SignInReading } from "../core/registry/sign-in.js";
import type { Manifest } from "../core/registry/types.js";
import { EXIT } from "./agents.js";
import { bin, linkAgent, makeSandbox, sessionJournals, standInManifest, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Whether an entry's CLI is signed in, read from the files it keeps and the environment it starts with: the reading
// itself, then what providers list, preflight and run make of it with stand-ins whose manifests point into the sandbox.

describe("reading whether a CLI is signed in", () => {
  const alpha: Pick<Manifest, "sign_in"> = {
    sign_in: {
      command: "alpha login",
      home: { env: "ALPHA_HOME", default: "~/.alpha" },
      files: [{ path: "auth.json" }, { path: "config.toml", line: "^provider\\s*=" }, { path: "config.toml", line: '^store = "keyring"$', unsure: true }],
      keychain: ["darwin"],
      env: ["ALPHA_KEY", "ALPHA_URL+ALPHA_TOKEN"],
    },
  };
  let home: string;
  beforeAll(() => void (home = mkdtempSync(join(tmpdir(), "uuldana-sign-in-"))));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  // Each case: the files under the home folder, the environment uuldana runs in, the entry's own env, the platform.
  interface Case {
    files?: Record<string, string>;
    folders?: string[];
    env?: Record<string, string>;
    entry?: Record<string, string>;
    platform?: NodeJS.Platform;
    expected: (home: string) => SignInReading;
  }
  const none = " and none of ALPHA_KEY, ALPHA_URL+ALPHA_TOKEN is set";
  const cases: [string, Case][] = [
    ["nothing there: not signed in", { expected: (h) => ({ signedIn: false, because: `found no ${h}/.alpha/auth.json${none}` }) }],
    ["its login file", { files: { ".alpha/auth.json": "{}" }, expected: (h) => ({ signedIn: true, because: `${h}/.alpha/auth.json exists` }) }],
    ["a variable that signs it in", { env: { ALPHA_KEY: "k" }, expected: () => ({ signedIn: true, because: "ALPHA_KEY is set" }) }],
    ["a variable set empty counts as unset", { env: { ALPHA_KEY: "" }, expected: (h) => ({ signedIn: false, because: `found no ${h}/.alpha/auth.json${none}` }) }],
    ["one of two variables that sign it in together", { env: { ALPHA_URL: "u" }, expected: (h) => ({ signedIn: false, because: `found no ${h}/.alpha/auth.json${none}` }) }],
    ["both of two variables that sign it in together", { env: { ALPHA_URL: "u", ALPHA_TOKEN: "t" }, expected: () => ({ signedIn: true, because: "ALPHA_URL and ALPHA_TOKEN are set" }) }],
    ["a line in its settings", { files: { ".alpha/config.toml": 'model = "x"\nprovider = "local"\n' }, expected: (h) => ({ signedIn: true, because: `${h}/.alpha/config.toml has a line matching ^provider\\s*=` }) }],
    ["its settings without that line", { files: { ".alpha/config.toml": 'model = "x"\n' }, expected: (h) => ({ signedIn: false, because: `found no ${h}/.alpha/auth.json${none}` }) }],
    [
      "a line that keeps its login in a keychain: cannot tell",
      { files: { ".alpha/config.toml": 'store = "keyring"\n' }, expected: (h) => ({ signedIn: null, because: `${h}/.alpha/config.toml has a line matching ^store = "keyring"$, so its login may be kept where uuldana cannot look` }) },
    ],
    ["a platform whose keychain may hold it: cannot tell", { platform: "darwin", expected: (h) => ({ signedIn: null, because: `found no ${h}/.alpha/auth.json, but on darwin its login may be in the system keychain` }) }],
    ["a folder where its login file would be", { folders: [".alpha/auth.json"], expected: (h) => ({ signedIn: false, because: `found no ${h}/.alpha/auth.json${none}` }) }],
    ["the folder its variable names", { files: { "elsewhere/auth.json": "{}" }, env: { ALPHA_HOME: "ELSEWHERE" }, expected: (h) => ({ signedIn: true, because: `${h}/elsewhere/auth.json exists` }) }],
    [
      "an entry's own folder (a second account) over the user's",
      { files: { ".alpha/auth.json": "{}" }, entry: { ALPHA_HOME: "SECOND" }, expected: (h) => ({ signedIn: false, because: `found no ${h}/second/auth.json${none}` }) },
    ],
    ["an entry's own key", { entry: { ALPHA_KEY: "k" }, expected: () => ({ signedIn: true, because: "ALPHA_KEY is set" }) }],
  ];
  it.each(cases)("%s", (_, one) => {
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home);
    for (const [path, text] of Object.entries(one.files ?? {})) {
      mkdirSync(dirname(join(home, path)), { recursive: true });
      writeFileSync(join(home, path), text);
    }
    for (const folder of one.folders ?? []) mkdirSync(join(home, folder), { recursive: true });
    const place = (values: Record<string, string> = {}): Record<string, string> =>
      Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value.replace("ELSEWHERE", join(home, "elsewhere")).replace("SECOND", join(home, "second"))]));
    const reading = readSignIn({ env: place(one.entry) }, alpha, { HOME: home, ...place(one.env) }, one.platform ?? "linux");
    expect(reading).toEqual(one.expected(home));
    expect(signedIn({ env: place(one.entry) }, alpha, { HOME: home, ...place(one.env) }, one.platform ?? "linux")).toBe(reading.signedIn);
  });

  it("cannot tell for a manifest that says nothing, or names variables only and none is set", () => {
    expect(readSignIn({ env: {} }, {}, { HOME: home })).toEqual({ signedIn: null, because: "its manifest does not say how to tell" });
    expect(readSignIn({ env: {} }, { sign_in: { command: "beta login" } }, { HOME: home })).toEqual({ signedIn: null, because: "its manifest does not say how to tell" });
    expect(readSignIn({ env: {} }, { sign_in: { env: ["BETA_TOKEN"] } }, { HOME: home })).toEqual({
      signedIn: null,
      because: "none of BETA_TOKEN is set, and its manifest names no file that shows a sign-in",
    });
    expect(signedIn({ env: {} }, { sign_in: { env: ["BETA_TOKEN"] } }, { HOME: home, BETA_TOKEN: "t" })).toBe(true);
  });
});

describe("entries that are not signed in", () => {
  let sandbox: Sandbox;
  const terminals: TestTerminal[] = [];
  afterEach(() => {
    for (const terminal of terminals.splice(0)) terminal.kill();
    sandbox.cleanup();
  });

  // A line-mode stand-in whose manifest keeps its login in ~/.<id>/auth.json (or <ID>_HOME) and takes <ID>_KEY.
  function standIn(id: string, signIn: Record<string, unknown> = { command: `${id} login`, home: { env: `${id.toUpperCase()}_HOME`, default: `~/.${id}` }, files: [{ path: "auth.json" }], env: [`${id.toUpperCase()}_KEY`] }): void {
    linkAgent(sandbox, id, "line-agent.mjs");
    sandbox.write(`config/providers/${id}.json`, standInManifest(id, { exit: EXIT, sign_in: signIn }));
  }

  // The three: "signed" has its login file, "unsigned" has none, "unknown" has a manifest that cannot tell.
  function setUp(providers: unknown[]): void {
    sandbox = makeSandbox();
    standIn("signed");
    standIn("unsigned");
    standIn("unknown", { command: "unknown login" });
    sandbox.write(".signed/auth.json", "{}");
    sandbox.write("config/config.json", { providers, auto_detect: false });
  }

  it("are shown in providers list as not signed in, with the command that signs each in; the entry's env is honoured", async () => {
    setUp(["unsigned", "signed", "unknown", { id: "unsigned", name: "unsigned-2", env: { UNSIGNED_HOME: "~/second" } }, { id: "unsigned", name: "unsigned-key", env: { UNSIGNED_KEY: "k" } }]);
    sandbox.write("second/auth.json", "{}");
    const table = await sandbox.run(["providers", "list"]);
    expect(table).toEqual({
      code: 0,
      stdout: [
        "#  ENTRY         PROVIDER  SOURCE   VERIFIED       VERSION  SIGNED IN  LEVEL  PROMPT  RESTING UNTIL  STATUS",
        '1  unsigned      unsigned  drop-in  documentation  1.0.0    no         ask    argv    -              not signed in: run "unsigned login"',
        "2  signed        signed    drop-in  documentation  1.0.0    yes        ask    argv    -              ready",
        "3  unknown       unknown   drop-in  documentation  1.0.0    ?          ask    argv    -              ready",
        "4  unsigned-2    unsigned  drop-in  documentation  1.0.0    yes        ask    argv    -              ready",
        "5  unsigned-key  unsigned  drop-in  documentation  1.0.0    yes        ask    argv    -              ready",
        "",
        "Ceiling ask: a new session starts signed at ask.",
        "",
      ].join("\n"),
      stderr: "",
    });
    const json = await sandbox.run(["providers", "list", "--json"]);
    const rows = JSON.parse(json.stdout) as { entry: string; signed_in: boolean | null; eligible: boolean; reasons: string[] }[];
    expect(rows.map(({ entry, signed_in, eligible, reasons }) => ({ entry, signed_in, eligible, reasons }))).toEqual([
      { entry: "unsigned", signed_in: false, eligible: false, reasons: ['not signed in: run "unsigned login"'] },
      { entry: "signed", signed_in: true, eligible: true, reasons: [] },
      { entry: "unknown", signed_in: null, eligible: true, reasons: [] },
      { entry: "unsigned-2", signed_in: true, eligible: true, reasons: [] },
      { entry: "unsigned-key", signed_in: true, eligible: true, reasons: [] },
    ]);
  });

  it("fail preflight, which names the command that signs each in and says what it found", async () => {
    setUp(["unsigned", "signed", "unknown"]);
    const lines = (entry: string, mark: string, signedIn: string): string =>
      [
        `${entry} (Stand-in ${entry}): ${mark === "✓" ? "ready" : "not ready"}`,
        `  ✓ installed  ${sandbox.path}/${entry}`,
        `  ✓ version    1.0.0, "${entry} --version" matched its version pattern`,
        `  ${mark} signed-in  ${signedIn}`,
        `  ✓ flags      "${entry} --help" lists --ask`,
        "  ✓ level      ask, the highest level it enforces within the ceiling ask",
        "  ✓ prompt     argv: the first prompt is its last argument",
        "  ✓ quota      no native source: its limits are read from its screen only",
        "  ✓ resting    not resting",
        "",
      ].join("\n");
    const unsigned = lines("unsigned", "✗", `not signed in: run "unsigned login" (found no ${sandbox.dir}/.unsigned/auth.json and none of UNSIGNED_KEY is set)`);
    expect(await sandbox.run(["preflight", "unsigned"])).toEqual({ code: 1, stdout: unsigned, stderr: "" });
    const signed = lines("signed", "✓", `signed in: ${sandbox.dir}/.signed/auth.json exists`);
    expect(await sandbox.run(["preflight", "signed"])).toEqual({ code: 0, stdout: signed, stderr: "" });
    const unknown = lines("unknown", "✓", "not checked: its manifest does not say how to tell");
    expect(await sandbox.run(["preflight", "unknown"])).toEqual({ code: 0, stdout: unknown, stderr: "" });
    expect(await sandbox.run(["preflight"])).toEqual({ code: 1, stdout: [unsigned, signed, unknown].join("\n"), stderr: "" });
  });

  const statuses: [string, string, string][] = [
    ["0", "✓", 'signed in: "checked auth status" exited 0'],
    ["1", "✗", 'not signed in: run "checked login" ("checked auth status" exited 1)'],
    ["hang", "✓", 'not checked: "checked auth status" gave no answer within 1 s'],
  ];
  it.each(statuses)("are asked by preflight with their status command where their files cannot tell (it answers %s)", async (exit, mark, detail) => {
    sandbox = makeSandbox();
    const signIn = { command: "checked login", files: [{ path: ".checked/auth.json" }], keychain: [process.platform], status: { args: ["auth", "status"], timeout_seconds: 1 } };
    standIn("checked", signIn);
    sandbox.write("config/config.json", { providers: ["checked"], auto_detect: false });
    const list = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout) as { signed_in: boolean | null }[];
    expect(list.map((row) => row.signed_in)).toEqual([null]);
    const run = await sandbox.run(["preflight", "checked", "--json"], { env: { FAKE_STATUS_EXIT: exit } });
    expect(run.code).toBe(mark === "✓" ? 0 : 1);
    const [entry] = JSON.parse(run.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }[];
    expect(entry!.checks[2]).toEqual({ name: "signed-in", ok: mark === "✓", detail });
  });

  it("are skipped by run, the first included, saying why and the command; the next entry starts", async () => {
    setUp(["unsigned", "signed"]);
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, cols: 120 });
    terminals.push(terminal);
    const screen = await terminal.waitFor("line agent ready");
    expect(screen.slice(0, 2)).toEqual([
      'uuldana: skipping unsigned: not signed in: run "unsigned login"',
      "uuldana: starting signed (Stand-in signed 1.0.0) at ask · ctrl-] opens uuldana's prompt",
    ]);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const [journal] = sessionJournals(sandbox.data);
    expect(journal!.filter((event) => event.type === "skipped")).toEqual([expect.objectContaining({ entry: "unsigned", reasons: ['not signed in: run "unsigned login"'] })]);
  });

  it("leave run nothing to start when none is signed in: exit 1, with the command that signs each in", () => {
    setUp(["unsigned", "bare"]);
    // a manifest that names no command: its reason can only say that it is not signed in
    standIn("bare", { files: [{ path: ".bare/token" }] });
    const none = spawnSync(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, encoding: "utf8", timeout: 20_000 });
    expect(none.stderr).toBe(
      ["uuldana: no entry can run under the ceiling ask [E_NO_ELIGIBLE_ENTRY]", '  unsigned: not signed in: run "unsigned login"', "  bare: not signed in", ""].join("\n"),
    );
    expect(none.status).toBe(1);
  });
});

describe("the built-in manifests", () => {
  let sandbox: Sandbox;
  afterEach(() => sandbox.cleanup());

  // Each CLI's own files or variables, as its login or its own settings leave them (test:real checks the same
  // against the real CLIs): a fresh home says not signed in where the manifest can tell.
  const CLIS = { claude: "claude-code", codex: "codex", gemini: "gemini", qwen: "qwen", copilot: "copilot", opencode: "opencode" };
  const cases: [string, { files?: string[]; env?: Record<string, string> }, (boolean | null)[]][] = [
    ["a fresh home", {}, [false, false, false, false, null, null]],
    [
      "each one's login file",
      { files: [".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".qwen/oauth_creds.json"] },
      [true, true, true, true, null, null],
    ],
    [
      "each one's key in the environment",
      { env: { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k", CODEX_API_KEY: "k", GEMINI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "m", GH_TOKEN: "t" } },
      // Codex's own screen asks to sign in with either key set (test:real): only its login makes it work
      [true, false, true, true, true, null],
    ],
    [
      "another account's folder for each, empty",
      { files: [".claude/.credentials.json", ".codex/auth.json"], env: { CLAUDE_CONFIG_DIR: "~/accounts/claude", CODEX_HOME: "~/accounts/codex", GEMINI_CLI_HOME: "~/accounts", QWEN_HOME: "~/accounts/qwen" } },
      [false, false, false, false, null, null],
    ],
    [
      "settings that choose a sign-in or a provider of its own",
      { files: [".codex/config.toml=model_provider = \"local\"", ".gemini/settings.json={\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}}"] },
      [false, true, true, false, null, null],
    ],
  ];
  it.each(cases)("read %s", async (_, given, expected) => {
    sandbox = makeSandbox();
    for (const name of Object.keys(CLIS)) linkAgent(sandbox, name, "real-version.sh");
    for (const file of given.files ?? []) {
      const [path, text = "{}"] = file.split(/=(.*)/s);
      sandbox.write(path!, text);
    }
    const env = Object.fromEntries(Object.entries(given.env ?? {}).map(([name, value]) => [name, value.replace(/^~/, sandbox.dir)]));
    sandbox.write("config/config.json", { providers: Object.values(CLIS), auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"], { env });
    const rows = JSON.parse(run.stdout) as { entry: string; signed_in: boolean | null }[];
    expect(rows.map((row) => [row.entry, row.signed_in])).toEqual(Object.values(CLIS).map((id, i) => [id, expected[i]]));
  });
});
