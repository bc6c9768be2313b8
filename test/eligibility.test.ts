import { describe, expect, it } from "vitest";

import type { CooldownTable } from "../core/session/cooldowns.js";
import type { Detection } from "../core/registry/detect.js";
import { assessEntry, buildPriorityList } from "../core/session/eligibility.js";
import { pickLevel } from "../core/config/levels.js";
import type { Entry } from "../core/config/config.js";
import type { Manifest } from "../core/registry/types.js";

const manifest = (id: string, extra: Partial<Manifest> = {}): Manifest => ({
  id,
  name: id,
  executables: [id],
  version: { args: ["--version"], pattern: "(\\S+)" },
  prompt: { mode: "argv" },
  levels: { ask: { args: ["--ask"] } },
  ...extra,
});
const installed: Detection = { installed: true, path: "/bin/x", version: "1.0.0", recognised: true, timedOut: false, problem: undefined, versionFrom: "probe" };
const missing: Detection = { installed: false, path: null, version: null, recognised: false, timedOut: false, problem: "no x on PATH", versionFrom: null };
const entry = (key: string, id = key): Entry => ({ key, id, env: {}, args: [], origin: "config" });
const noCooldowns: CooldownTable = { file: "cooldowns.json", entries: new Map(), problem: undefined };
const now = new Date("2026-11-30T12:00:00Z");

describe("the priority list", () => {
  const providers = new Map(["zeta", "alpha", "mid", "gone"].map((id) => [id, manifest(id)]));
  const detections = new Map([
    ["zeta", installed],
    ["alpha", installed],
    ["mid", installed],
    ["gone", missing],
  ]);

  it("puts listed entries first in config order, then installed unlisted providers by id", () => {
    const list = buildPriorityList({ entries: [entry("mid"), entry("mid-2", "mid")], autoDetect: true, providers, detections });
    expect(list.map((e) => [e.key, e.origin])).toEqual([
      ["mid", "config"],
      ["mid-2", "config"],
      ["alpha", "detected"],
      ["zeta", "detected"],
    ]);
  });

  it("keeps to the listed entries when auto_detect is off, and adds everything known with includeAll", () => {
    expect(buildPriorityList({ entries: [entry("zeta")], autoDetect: false, providers, detections }).map((e) => e.key)).toEqual(["zeta"]);
    expect(
      buildPriorityList({ entries: [entry("zeta")], autoDetect: false, providers, detections, includeAll: true }).map((e) => e.key),
    ).toEqual(["zeta", "alpha", "gone", "mid"]);
  });
});

describe("eligibility", () => {
  const providers = new Map([
    ["a", manifest("a", { levels: { "read-only": {}, "auto-edit": { args: ["--edit"] }, "full-access": { args: ["--all"] } } })],
    ["silent", manifest("silent", { prompt: undefined })],
    ["typed", manifest("typed", { prompt: { mode: "typed", ready: ">" } })],
  ]);
  const detections = new Map([
    ["a", installed],
    ["silent", installed],
    ["typed", installed],
  ]);

  it.each([
    ["read-only", "read-only"],
    ["ask", "read-only"],
    ["auto-edit", "auto-edit"],
    ["full-access", "full-access"],
  ] as const)("under the ceiling %s runs at the highest level it enforces: %s", (ceiling, level) => {
    const assessment = assessEntry(entry("a"), 1, providers, detections, { ceiling, cooldowns: noCooldowns, now });
    expect(assessment.level).toBe(level);
    expect(assessment.eligible).toBe(true);
  });

  it("never picks a level above the ceiling", () => {
    expect(pickLevel(["full-access"], "auto-edit")).toBeNull();
    expect(pickLevel(["ask", "full-access"], "auto-edit")).toBe("ask");
  });

  it("refuses a handoff to an entry that takes no first prompt, but lets it start a session", () => {
    const start = assessEntry(entry("silent"), 1, providers, detections, { ceiling: "ask", cooldowns: noCooldowns, now });
    expect([start.prompt, start.eligible]).toEqual(["none", true]);
    const handoff = assessEntry(entry("silent"), 1, providers, detections, { ceiling: "ask", cooldowns: noCooldowns, now, handoff: true });
    expect(handoff.reasons).toEqual(["takes no first prompt, so it cannot continue a conversation"]);
    const typed = assessEntry(entry("typed"), 1, providers, detections, { ceiling: "ask", cooldowns: noCooldowns, now, handoff: true });
    expect(typed.eligible).toBe(true);
  });

  it("keeps every reason an entry cannot run, not only the first", () => {
    const cooldowns: CooldownTable = {
      file: "cooldowns.json",
      entries: new Map([["silent", { until: new Date("2026-11-30T17:00:00Z"), since: undefined, source: "inferred", kind: "session", text: undefined }]]),
      problem: undefined,
    };
    const assessment = assessEntry(entry("silent"), 3, providers, new Map([["silent", missing]]), {
      ceiling: "read-only",
      cooldowns,
      now,
      handoff: true,
    });
    expect(assessment.reasons).toEqual([
      "resting until 2026-11-30 17:00 UTC",
      "not installed: no x on PATH",
      'refused: cannot run within the ceiling "read-only" (it enforces only ask)',
      "takes no first prompt, so it cannot continue a conversation",
    ]);
    expect(assessment.restingUntil?.toISOString()).toBe("2026-11-30T17:00:00.000Z");
  });

  it("treats a cooldown that has ended as not resting", () => {
    const cooldowns: CooldownTable = {
      file: "cooldowns.json",
      entries: new Map([["a", { until: new Date("2026-11-30T11:59:59Z"), since: undefined, source: "manual", kind: undefined, text: undefined }]]),
      problem: undefined,
    };
    expect(assessEntry(entry("a"), 1, providers, detections, { ceiling: "ask", cooldowns, now }).eligible).toBe(true);
  });
});

describe("an entry whose env sets what its CLI reads as a permission setting", () => {
  it("is refused, naming the variable", () => {
    const providers = new Map([["aid", manifest("aid", { levels: { "read-only": { args: ["--chat-mode", "ask"] } }, permission_env: ["AIDER_YES_ALWAYS"] })]]);
    const detections = new Map([["aid", installed]]);
    const risky: Entry = { ...entry("aid"), env: { AIDER_YES_ALWAYS: "true", AIDER_MODEL: "sonnet" } };
    const assessment = assessEntry(risky, 1, providers, detections, { ceiling: "ask", cooldowns: noCooldowns, now });
    expect(assessment).toMatchObject({ eligible: false, level: null });
    expect(assessment.reasons).toEqual(['refused: its "env" sets AIDER_YES_ALWAYS, which aid reads as a permission setting; remove it: read-only is the most aid enforces']);
    const plain = assessEntry({ ...entry("aid"), env: { AIDER_MODEL: "sonnet" } }, 1, providers, detections, { ceiling: "ask", cooldowns: noCooldowns, now });
    expect(plain).toMatchObject({ eligible: true, level: "read-only" });
  });
});
