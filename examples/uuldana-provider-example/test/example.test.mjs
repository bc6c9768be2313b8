// The pack's own tests: its manifest and adapter opened as uuldana opens them, against screens the agent drew.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { loadProvider, readScreen } from "uuldana/testing";

const manifest = fileURLToPath(new URL("../manifests/example.json", import.meta.url));
const screen = (name) => fileURLToPath(new URL(`screens/${name}`, import.meta.url));
// a session gives each hook call 50 ms; a busy test machine gets more, for the hooks' answers are what is tested here
const options = { budgetMs: 1000 };

test("its limit message, from a uuldana report of a real session, is a daily limit, read by its adapter", async () => {
  const provider = await loadProvider(manifest, options);
  const lines = readScreen(screen("bean-jar-report.md"), { provider: "example" });
  const limit = lines.find((line) => line.includes("bean jar"));
  assert.equal(limit, "☕ The bean jar is empty. beans: 0 of 2 left today");
  const verdict = provider.explain(limit, { now: "2026-12-06T20:33:28Z" });
  assert.equal(verdict.stop, true);
  assert.equal(verdict.kind, "daily");
  assert.deepEqual(verdict.reasons, ["the example agent's bean counter is at 0 of 2"]);
  assert.deepEqual(provider.problems, []);
});

test("its bean counter at zero is a daily limit, by the adapter's classify hook alone", async () => {
  const provider = await loadProvider(manifest, options);
  assert.deepEqual(provider.hooks.classify("beans: 0 of 2 left today"), { stop: true, kind: "daily", reason: "the example agent's bean counter is at 0 of 2" });
  assert.equal(provider.hooks.classify("beans: 1 of 2 left today"), undefined);
  assert.equal(provider.explain("beans: 0 of 2 left today").stop, true);
});

test("while it works, nothing on its screen is a stop, and its banner and footers are chrome", async () => {
  const provider = await loadProvider(manifest, options);
  const lines = readScreen(screen("working.txt"));
  assert.deepEqual(
    lines.filter((line) => provider.explain(line).stop),
    [],
  );
  assert.deepEqual(provider.chrome(lines), [
    "Example agent 1.0.0 · --ask · /quit leaves",
    "── example · 3 of 3 beans left ──",
    "── example · 2 of 3 beans left ──",
  ]);
  assert.deepEqual(provider.problems, []);
});
