import { join } from "node:path";

import { afterAll, beforeEach, describe, expect, it } from "vitest";

import { loadManifestFile } from "../core/registry/manifest.js";
import { formatHookProblem, HOOK_BUDGET_MS, openProvider, type HookProblem, type ProviderHooks } from "../core/registry/provider.js";
import { fixtures, makeSandbox, runFile, standInManifest } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

// The clock the tests hand to openProvider; an adapter moves it on to look slow without being slow.
interface TestClock {
  now: number;
  calls: Record<string, number>;
}
const clock = (): TestClock => (globalThis as unknown as { uuldanaTest: TestClock }).uuldanaTest;
beforeEach(() => {
  (globalThis as unknown as { uuldanaTest: TestClock }).uuldanaTest = { now: 0, calls: {} };
});

// A drop-in manifest, with its adapter beside it when there is adapter code, written to the sandbox's config dir.
function dropIn(id: string, overrides: Record<string, unknown>, adapter?: string): string {
  if (adapter !== undefined) sandbox.write(`config/providers/${id}.mjs`, adapter);
  return sandbox.write(`config/providers/${id}.json`, standInManifest(id, { ...overrides, ...(adapter !== undefined ? { adapter: `./${id}.mjs` } : {}) }));
}

async function open(file: string, options: { budgetMs?: number; realClock?: boolean } = {}): Promise<{ hooks: ProviderHooks; problems: HookProblem[] }> {
  const record = await loadManifestFile(file, "drop-in");
  expect(record.error).toBeUndefined();
  const problems: HookProblem[] = [];
  // in uuldana's thread, as its own adapters run, so that the adapter and the test share globalThis.uuldanaTest
  const hooks = await openProvider(record, {
    report: (problem) => problems.push(problem),
    where: "in-process",
    ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}),
    ...(options.realClock ? {} : { clock: () => clock().now }),
  });
  return { hooks, problems };
}

let shapes = 0;

// An adapter hook that counts its calls, so a test can tell a hook that is off from one that answers false.
const counted = (name: string, body: string): string => `${name}(arg) { globalThis.uuldanaTest.calls.${name} = (globalThis.uuldanaTest.calls.${name} ?? 0) + 1; ${body} }`;

describe("a provider's hooks", () => {
  it("use every hook an adapter gives", async () => {
    const file = dropIn(
      "full",
      { chrome: ["^╭─"], busy: ["esc to interrupt"] },
      `export default {
  classify: (text) => (text.includes("juice is gone") ? { stop: true, kind: "weekly", reset_at: "2026-12-05T08:00:00+01:00", reason: "says its juice is gone" } : undefined),
  chrome: (line) => line.startsWith("full>"),
  busy: (screen) => screen.some((line) => line.includes("◐")),
  conversation: (text) => text.split("\\n").filter(Boolean).map((line, i) => ({ role: i % 2 ? "agent" : "user", text: line })),
  ready: (screen) => screen.at(-1) === "full> ",
};
`,
    );
    const { hooks, problems } = await open(file);
    expect(hooks.classify("your juice is gone")).toEqual({ stop: true, kind: "weekly", reset_at: "2026-12-05T07:00:00.000Z", reason: "says its juice is gone" });
    expect(hooks.classify("all fine")).toBeUndefined();
    expect(["full> hello", "╭─── box", "plain text"].map(hooks.chrome)).toEqual([true, true, false]);
    expect([hooks.busy(["a", "◐ thinking"]), hooks.busy(["(esc to interrupt)"]), hooks.busy(["idle"])]).toEqual([true, true, false]);
    expect(hooks.conversation("fix it\nfixed\n")).toEqual([
      { role: "user", text: "fix it" },
      { role: "agent", text: "fixed" },
    ]);
    expect([hooks.ready(["banner", "full> "]), hooks.ready(["banner", "loading"])]).toEqual([true, false]);
    expect(problems).toEqual([]);
  });

  it("work from the manifest's patterns alone when there is no adapter", async () => {
    const file = dropIn("plain", {
      prompt: { mode: "typed", ready: "^plain> $" },
      chrome: ["^\\s*[╭╰│]", "\\? for shortcuts$"],
      busy: ["^[◐◓◑◒] \\w+… \\(\\d+s\\)"],
    });
    const { hooks, problems } = await open(file);
    expect(["╭────╮", "  │ > ", "  ? for shortcuts", "the answer is 42"].map(hooks.chrome)).toEqual([true, true, true, false]);
    expect([hooks.busy(["the answer", "◓ Working… (12s)"]), hooks.busy(["Working on step 7…", "◓ Working…"])]).toEqual([true, false]);
    expect([hooks.ready(["banner", "plain> "]), hooks.ready(["plain> x"])]).toEqual([true, false]);
    expect([hooks.classify("weekly limit reached"), hooks.conversation("text")]).toEqual([undefined, undefined]);
    expect((await open(dropIn("bare", {}))).hooks.ready(["bare> "])).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it("turn off a hook that throws, report it once, and carry on with the manifest", async () => {
    const file = dropIn("thrower", { busy: ["esc to interrupt"], prompt: { mode: "typed", ready: "> $" } }, `export default {
  ${counted("busy", 'throw new Error("no spinner\\nsecond line");')},
  ${counted("ready", "throw 42;")},
};
`);
    const { hooks, problems } = await open(file);
    expect(hooks.busy(["working"])).toBe(false);
    expect(hooks.busy(["working"])).toBe(false);
    expect(hooks.busy(["esc to interrupt"])).toBe(true);
    expect(hooks.ready(["> "])).toBe(true);
    expect(hooks.ready(["loading"])).toBe(false);
    expect(clock().calls).toEqual({ busy: 1, ready: 1 });
    expect(problems).toEqual([
      { provider: "thrower", hook: "busy", failure: "threw", message: "no spinner", durationMs: 0, budgetMs: HOOK_BUDGET_MS },
      { provider: "thrower", hook: "ready", failure: "threw", message: "42", durationMs: 0, budgetMs: HOOK_BUDGET_MS },
    ]);
    expect(problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "thrower": its busy hook threw (no spinner); uuldana carries on without it',
      'uuldana: provider "thrower": its ready hook threw (42); uuldana carries on without it',
    ]);
  });

  it("turn off a hook whose calls take longer than the budget twice in a row, keeping those calls' answers", async () => {
    const file = dropIn("slowpoke", { chrome: ["^─+$"] }, `export default {
  ${counted("classify", 'globalThis.uuldanaTest.now += arg === "slow" ? 180 : 10; return { stop: true, reason: arg };')},
  ${counted("chrome", "globalThis.uuldanaTest.now += 50; return arg.startsWith('slowpoke>');")},
};
`);
    const { hooks, problems } = await open(file);
    expect(hooks.classify("quick")).toEqual({ stop: true, reason: "quick" });
    expect(hooks.chrome("slowpoke> hi")).toBe(true);
    expect(problems).toEqual([]);
    // one slow call is the machine's: the hook stays on, and a quick call forgets it
    expect(hooks.classify("slow")).toEqual({ stop: true, reason: "slow" });
    expect(hooks.classify("quick")).toEqual({ stop: true, reason: "quick" });
    expect(hooks.classify("slow")).toEqual({ stop: true, reason: "slow" });
    expect(problems).toEqual([]);
    // a second one in a row is the hook's
    expect(hooks.classify("slow")).toEqual({ stop: true, reason: "slow" });
    expect(hooks.classify("quick")).toBeUndefined();
    expect(clock().calls).toEqual({ classify: 5, chrome: 1 });
    expect(problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "slowpoke": its classify hook took 180 ms (the budget is 50 ms); uuldana carries on without it',
    ]);
    expect(problems[0]).toEqual({ provider: "slowpoke", hook: "classify", failure: "slow", message: "took 180 ms", durationMs: 180, budgetMs: 50 });
  });

  it("turn off a hook that is slow by the real clock", async () => {
    const budgetMs = 40;
    const file = dropIn("spinner", { busy: ["esc to interrupt"] }, `export default {
  ${counted("busy", `const until = performance.now() + ${budgetMs * 3}; while (performance.now() < until) {} return true;`)},
};
`);
    const { hooks, problems } = await open(file, { budgetMs, realClock: true });
    expect(hooks.busy(["working"])).toBe(true);
    expect(problems).toHaveLength(0);
    expect(hooks.busy(["working"])).toBe(true);
    expect(hooks.busy(["working"])).toBe(false);
    expect(hooks.busy(["esc to interrupt"])).toBe(true);
    expect(clock().calls).toEqual({ busy: 2 });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.durationMs).toBeGreaterThanOrEqual(budgetMs * 3);
    expect(formatHookProblem(problems[0]!)).toBe(
      `uuldana: provider "spinner": its busy hook took ${problems[0]!.durationMs} ms (the budget is ${budgetMs} ms); uuldana carries on without it`,
    );
  });

  it.each([
    ["classify", "42", "42, not undefined or a verdict ({ stop, kind?, reset_at?, reason? })"],
    ["classify", '({ stop: "yes" })', '{"stop":"yes"}, whose stop is not true or false'],
    ["classify", '({ stop: true, resetAt: "soon" })', '{"stop":true,"resetAt":"soon"}, whose "resetAt" is not part of a verdict ({ stop, kind?, reset_at?, reason? })'],
    ["classify", '({ stop: true, reset_at: "next tuesday" })', '{"stop":true,"reset_at":"next tuesday"}, whose reset_at is not a date and time (such as "2026-12-05T08:00:00Z")'],
    ["classify", "({ stop: true, kind: 7 })", '{"stop":true,"kind":7}, whose kind is not text'],
    ["classify", "Promise.resolve({ stop: true })", "a promise (hooks are synchronous), not undefined or a verdict ({ stop, kind?, reset_at?, reason? })"],
    ["chrome", "1", "1, not true or false"],
    ["busy", "undefined", "undefined, not true or false"],
    ["ready", '"yes"', '"yes", not true or false'],
    ["conversation", '[{ role: "assistant", text: "hi" }]', '[{"role":"assistant","text":"hi"}], not undefined or a list of turns ({ role: "user", "agent" or "tool", text })'],
    ["conversation", `"${"x".repeat(100)}"`, `"${"x".repeat(78)}…, not undefined or a list of turns ({ role: "user", "agent" or "tool", text })`],
  ])("treat a %s hook that returns %s like one that throws", async (hook, returned, message) => {
    const id = `shape-${(shapes += 1)}`;
    const file = dropIn(id, {}, `export default { ${counted(hook, `return ${returned};`)} };\n`);
    const { hooks, problems } = await open(file);
    const call = (): unknown => (hooks[hook as keyof ProviderHooks] as (arg: unknown) => unknown)(hook === "busy" || hook === "ready" ? ["x"] : "x");
    const fallback = hook === "chrome" || hook === "busy" ? false : undefined;
    expect([call(), call()]).toEqual([fallback, fallback]);
    expect(clock().calls).toEqual({ [hook]: 1 });
    expect(problems.map(formatHookProblem)).toEqual([`uuldana: provider "${id}": its ${hook} hook returned ${message}; uuldana carries on without it`]);
  });

  it("accept a verdict whose optional parts are null, and copy it", async () => {
    const file = dropIn("nulls", {}, `const verdict = { stop: false, kind: null, reset_at: null, reason: null };\nexport default { classify: () => verdict };\n`);
    const { hooks, problems } = await open(file);
    const first = hooks.classify("x")!;
    expect(first).toEqual({ stop: false });
    first.stop = true;
    expect(hooks.classify("x")).toEqual({ stop: false });
    expect(problems).toEqual([]);
  });

  it("refuse to open a provider whose adapter will not load", async () => {
    const file = dropIn("broken", {}, "export default {\n  busy() { return true;\n};\n");
    const record = await loadManifestFile(file, "drop-in");
    await expect(openProvider(record, { report: () => undefined })).rejects.toMatchObject({
      code: "E_ADAPTER_LOAD",
      message: `the adapter of provider "broken" will not load: a syntax error on line 3 (Unexpected token ';')`,
    });
  });

  it("name the pack a provider came from when a hook is turned off or its adapter will not load", async () => {
    const file = dropIn("packed", {}, `export default { chrome() { throw new Error("no chrome today"); } };\n`);
    const problems: HookProblem[] = [];
    const hooks = await openProvider(await loadManifestFile(file, "pack uuldana-provider-packed@1.2.0"), { report: (problem) => problems.push(problem), clock: () => clock().now });
    expect(hooks.chrome("line")).toBe(false);
    expect(problems.map(formatHookProblem)).toEqual(['uuldana: provider "packed" (pack uuldana-provider-packed@1.2.0): its chrome hook threw (no chrome today); uuldana carries on without it']);
    expect(problems[0]!.pack).toBe("uuldana-provider-packed@1.2.0");
    const broken = dropIn("packed-broken", {}, "export default [];\n");
    await expect(openProvider(await loadManifestFile(broken, "pack uuldana-provider-packed@1.2.0"), { report: () => undefined })).rejects.toMatchObject({
      code: "E_ADAPTER_INVALID",
      message: 'the adapter of provider "packed-broken" (pack uuldana-provider-packed@1.2.0) has an array as its default export, not a plain object',
    });
  });

  it("behave the same under plain node, as a session runs them", async () => {
    const file = dropIn("native", { chrome: ["^native>"] }, `export default {
  classify: (text) => (text === "out of beans" ? { stop: true, kind: "daily" } : undefined),
  busy: () => { throw new TypeError("screen.at is not a function"); },
};
`);
    const calls = ["classify", '"out of beans"', "chrome", '"native> hi"', "busy", '["x"]', "busy", '["x"]', "conversation", '"x"'];
    const run = await runFile(process.execPath, [join(fixtures, "open-provider.mjs"), file, ...calls], { cwd: sandbox.project, env: sandbox.env });
    expect(run).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        '{"stop":true,"kind":"daily"}',
        "true",
        'uuldana: provider "native": its busy hook threw (screen.at is not a function); uuldana carries on without it',
        "false",
        "false",
        "undefined",
        "",
      ].join("\n"),
    });
    const broken = dropIn("native-broken", {}, "export default { busy() { return ; } ;\n");
    const failed = await runFile(process.execPath, [join(fixtures, "open-provider.mjs"), broken], { cwd: sandbox.project, env: sandbox.env });
    expect(failed).toEqual({
      code: 1,
      stdout: "",
      stderr:
        `uuldana: the adapter of provider "native-broken" will not load: a syntax error on line 1 (Unexpected token ';') [E_ADAPTER_LOAD]\n` +
        `  adapter: ${join(sandbox.config, "providers", "native-broken.mjs")}\n  manifest: ${broken}\n` +
        `hint: fix the adapter, or remove "adapter" from the manifest to run native-broken without one\n`,
    });
  });
});

describe("an adapter from a pack or the providers folder, in a thread of its own", () => {
  const threaded = async (id: string, adapter: string, budgetMs = HOOK_BUDGET_MS): Promise<{ hooks: ProviderHooks; problems: HookProblem[] }> => {
    const record = await loadManifestFile(dropIn(id, {}, adapter), "pack uuldana-provider-threaded@2.0.0");
    const problems: HookProblem[] = [];
    return { hooks: await openProvider(record, { report: (problem) => problems.push(problem), budgetMs }), problems };
  };
  // until the thread has told what became of a call left behind
  const told = async (problems: HookProblem[]): Promise<void> => {
    while (problems.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  it("answers as in uuldana's thread, and names a promise or a function returned as it does", async () => {
    const { hooks, problems } = await threaded("copied", `export default {
  classify: (text) => (text === "gone" ? { stop: true, reset_at: "2026-12-05T08:00:00+01:00" } : undefined),
  chrome: () => Promise.resolve(true),
  busy: () => () => true,
};
`);
    expect([hooks.classify("gone"), hooks.classify("fine")]).toEqual([{ stop: true, reset_at: "2026-12-05T07:00:00.000Z" }, undefined]);
    expect([hooks.chrome("x"), hooks.busy(["x"])]).toEqual([false, false]);
    expect(problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "copied" (pack uuldana-provider-threaded@2.0.0): its chrome hook returned a promise (hooks are synchronous), not true or false; uuldana carries on without it',
      'uuldana: provider "copied" (pack uuldana-provider-threaded@2.0.0): its busy hook returned a function, not true or false; uuldana carries on without it',
    ]);
  });

  it("leaves a slow call behind at its budget, answering nothing, and turns that hook off when it comes back", async () => {
    const { hooks, problems } = await threaded("dawdler", `export default {
  busy: () => { const until = performance.now() + 300; while (performance.now() < until) {} return true; },
  chrome: (line) => line === "mine",
};
`);
    expect(hooks.busy(["x"])).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hooks.chrome("mine")).toBe(true);
    expect(hooks.busy(["x"])).toBe(false);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ hook: "busy", failure: "slow", budgetMs: HOOK_BUDGET_MS });
    expect(formatHookProblem(problems[0]!)).toBe(
      `uuldana: provider "dawdler" (pack uuldana-provider-threaded@2.0.0): its busy hook took ${problems[0]!.durationMs} ms (the budget is 50 ms); uuldana carries on without it`,
    );
  });

  it("ends the thread of a hook that never returns, and the adapter is off", async () => {
    const { hooks, problems } = await threaded("spinner", `export default { classify: () => { for (;;) {} }, chrome: () => true };\n`);
    expect(hooks.classify("x")).toBeUndefined();
    // while the call is left behind, the other hooks are not called
    expect(hooks.chrome("x")).toBe(false);
    await told(problems);
    expect(problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "spinner" (pack uuldana-provider-threaded@2.0.0): its classify hook did not return (the budget is 50 ms); uuldana turned its adapter off and carries on without it',
    ]);
    expect([hooks.chrome("x"), hooks.classify("x")]).toEqual([false, undefined]);
    expect(problems).toHaveLength(1);
  });

  it("turns the adapter off when it ends its thread, in a hook or between calls, or throws outside any hook", async () => {
    const inHook = await threaded("quitter", `export default { busy: () => process.exit(4), chrome: () => true };\n`);
    expect([inHook.hooks.busy(["x"]), inHook.hooks.chrome("x")]).toEqual([false, false]);
    expect(inHook.problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "quitter" (pack uuldana-provider-threaded@2.0.0): its busy hook called process.exit(4); uuldana turned its adapter off and carries on without it',
    ]);
    const between = await threaded("leaver", `setTimeout(() => process.exit(0), 10);\nexport default { chrome: () => true };\n`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(between.hooks.chrome("x")).toBe(false);
    expect(between.problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "leaver" (pack uuldana-provider-threaded@2.0.0): its adapter called process.exit(0); uuldana turned its adapter off and carries on without it',
    ]);
    const thrower = await threaded("timer", `setTimeout(() => { throw new Error("tick"); }, 10);\nexport default { chrome: () => true };\n`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(thrower.hooks.chrome("x")).toBe(false);
    expect(thrower.problems.map(formatHookProblem)).toEqual([
      'uuldana: provider "timer" (pack uuldana-provider-threaded@2.0.0): its adapter threw outside any hook (tick); uuldana turned its adapter off and carries on without it',
    ]);
  });

  it("will not load an adapter that loops, awaits forever or exits at its top level", async () => {
    const opened = async (id: string, adapter: string): Promise<unknown> =>
      openProvider(await loadManifestFile(dropIn(id, {}, adapter), "drop-in"), { report: () => undefined }).then(() => "opened", (error: Error) => error.message);
    expect(await opened("looping", "for (;;) {}\nexport default {};\n")).toBe(
      'the adapter of provider "looping" will not load: it was still loading after 3 s (a loop, or a top-level await that never settles)',
    );
    expect(await opened("waiting", "await new Promise(() => undefined);\nexport default {};\n")).toBe(
      'the adapter of provider "waiting" will not load: it was still loading after 3 s (a loop, or a top-level await that never settles)',
    );
    expect(await opened("exiting", "process.exit(0);\nexport default {};\n")).toBe('the adapter of provider "exiting" will not load: its top level called process.exit(0)');
  });
});
