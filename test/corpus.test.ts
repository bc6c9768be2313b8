import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { classifyText } from "../core/reader/reader.js";
import { judgeSpeaker, type SpeakerFacts } from "../core/reader/speaker.js";
import { loadBuiltInManifests } from "../core/registry/registry.js";
import { root } from "./helpers.js";

// The corpus: real wording from the agents' own packages and their public issue trackers (each line names its
// source), and near misses. The expected reset instants are for this clock and local zone, or for the zone a line
// names as its vendor's (time_zone: what the agent's manifest or entry would name). A line may carry the facts of
// where it would reach a run (speaker: drawn as, or recorded in, the agent's answer or a tool's output), when those
// and not its words tell it from a notice.
const NOW = new Date("2026-11-30T12:00:00Z");
const ZONE = "Europe/Berlin";

interface StopLine {
  text: string;
  agent: string;
  source: string;
  reset: string | null;
  time_zone?: string;
}

interface NearMiss {
  text: string;
  agent: string;
  source: string;
  class: string;
  speaker?: SpeakerFacts;
}

const read = <T>(name: string): T[] =>
  readFileSync(join(root, "test", "corpus", name), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as T);

const stops = read<StopLine>("stop.jsonl");
const nearMisses = read<NearMiss>("not-stop.jsonl");
// the model names the built-in agents offer, as explain and a run pass them
const MODELS = [...new Set((await loadBuiltInManifests()).flatMap((manifest) => manifest.models?.names ?? []))];
const verdict = (text: string, zone = ZONE) => classifyText(text, { now: NOW, timeZone: zone, models: MODELS });
const heard = (line: NearMiss) => (line.speaker ? judgeSpeaker(verdict(line.text), line.speaker) : verdict(line.text));

describe("the corpus", () => {
  it("is large and varied enough: 100+ stops from 8+ agents, 250+ near misses of every class", () => {
    expect(stops.length).toBeGreaterThanOrEqual(100);
    expect(new Set(stops.map((line) => line.agent)).size).toBeGreaterThanOrEqual(8);
    expect(nearMisses.length).toBeGreaterThanOrEqual(250);
    const classes = new Set(nearMisses.map((line) => line.class));
    for (const needed of ["partial-use", "approaching", "rate-retry", "overload", "context-window", "model-switch", "question", "code", "quoted", "docs", "meter", "other-limit", "assistant-text", "boxed"]) {
      expect(classes, needed).toContain(needed);
    }
  });

  it("names a source for every line", () => {
    for (const line of [...stops, ...nearMisses]) expect(line.source, line.text).toMatch(/^(?:https:\/\/|npm |written for uuldana)/);
  });

  it("stops on every must-stop line, with its reset instant", () => {
    const wrong = stops.filter((line) => {
      const v = verdict(line.text, line.time_zone);
      return !v.stop || v.reset_at !== line.reset;
    });
    expect(wrong.map((line) => `${line.text} → ${JSON.stringify(verdict(line.text, line.time_zone))}`)).toEqual([]);
  });

  it("stops on no near miss", () => {
    const wrong = nearMisses.filter((line) => heard(line).stop);
    expect(wrong.map((line) => `[${line.class}] ${line.text} → ${heard(line).reasons.join("; ")}`)).toEqual([]);
  });

  it("keeps no list of sentences: no run of six words from the corpus is in the reader's source", () => {
    const folder = join(root, "core", "reader");
    const source = readdirSync(folder).map((file) => readFileSync(join(folder, file), "utf8")).join("\n");
    const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
    const sourceText = ` ${words(source).join(" ")} `;
    const found: string[] = [];
    for (const line of [...stops, ...nearMisses]) {
      const w = words(line.text);
      for (let i = 0; i + 6 <= w.length; i++) {
        const run = w.slice(i, i + 6).join(" ");
        if (sourceText.includes(` ${run} `)) found.push(run);
      }
    }
    expect(found).toEqual([]);
  });
});

// A small seeded generator, so a failure can be replayed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORK = [
  "I'll read the module first to see how the tokens are produced.",
  "⏺ Read(src/lexer.ts)",
  "  ⎿  Read 212 lines",
  "  function scan(input: string): Token[] {",
  "+   const next = peek(input, offset);",
  "Tests: 41 passed, 2 failed",
  "The failing tests expect the old error message; I'll update them.",
  "✻ Working… (34s · ↑ 1.2k tokens · esc to interrupt)",
  "Done. The parser now reports the line and column of each error.",
  "│ > add a test for the empty input case                                   │",
];

describe("random agent-like output", () => {
  it("yields no stop with near misses inserted, and always finds a real stop line inserted anywhere", () => {
    const next = random(20261130);
    const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]!;
    for (let trial = 0; trial < 300; trial++) {
      const lines = Array.from({ length: 5 + Math.floor(next() * 30) }, () => pick(WORK));
      // a near miss told only by who speaks is not mixed into plain text
      const plain = nearMisses.filter((line) => !line.speaker);
      for (let i = 0; i < 3; i++) lines.splice(Math.floor(next() * lines.length), 0, "", pick(plain).text, "");
      const quiet = verdict(lines.join("\n"));
      expect(quiet.stop, lines.join("\n")).toBe(false);
      const stop = pick(stops);
      lines.splice(Math.floor(next() * lines.length), 0, "", stop.text, "");
      const found = verdict(lines.join("\n"), stop.time_zone);
      expect(found.stop, lines.join("\n")).toBe(true);
    }
  });
});

describe("the corpus files", () => {
  it("are only these two", () => {
    expect(readdirSync(join(root, "test", "corpus")).sort()).toEqual(["not-stop.jsonl", "stop.jsonl"]);
  });
});
