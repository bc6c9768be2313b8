import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { RUN_EVENTS, RUN_STATES, RunMachine, nextMove, transitionRows, type LimitProposals, type RunEventType, type RunState } from "../core/session/run-machine.js";

// Every state × every event: where it goes and what the run does ("to effect"); an event a state does not list is
// ignored there. Limit events are listed with no policy proposing anything but failover.
const FAILOVER: LimitProposals = { switchModel: false, agentWaits: false, failover: true };

const LIVE = {
  drawn: "same look",
  keys: "same renew",
  candidate: "limit-seen note",
  limit: "stopping fail-over",
  "native-limit": "stopping fail-over",
  "own-switch": "stopping fail-over",
  took: "same none",
  "not-taken": "stopping stop",
  "sign-in-late": "stopping stop",
  "native-low": "moving-on await-boundary",
  "rest-elsewhere": "moving-on await-boundary",
  "home-due": "moving-on await-boundary",
  "paid-spend": "moving-on await-boundary",
  exit: "ended none",
  "failing-exit": "ended none",
  signal: "stopping stop",
};
const RECEIVING = { ...LIVE, keys: "same renew", took: "working none", "sign-in": "stopping stop", question: "asking none" };

const EXPECTED: Record<RunState, Partial<Record<RunEventType, string>>> = {
  receiving: RECEIVING,
  asking: { ...RECEIVING, question: "same none" },
  "signing-in": { ...LIVE, keys: "same none", "signed-in": "working none" },
  working: { ...LIVE, "sign-in": "signing-in none" },
  "limit-seen": { ...LIVE, candidate: "same note", dismissed: "working note", left: "working note" },
  switching: { drawn: "same look", "switch-took": "working none", "switch-failed": "stopping fail-over", exit: "ended none", "failing-exit": "ended none", signal: "stopping stop" },
  "agent-waits": {
    drawn: "same look",
    candidate: "same note",
    dismissed: "same note",
    left: "same note",
    limit: "stopping fail-over",
    exit: "ended none",
    "failing-exit": "ended take-back",
    "wait-ended": "stopping take-back-stop",
    signal: "stopping stop",
  },
  "moving-on": {
    drawn: "same look",
    candidate: "same note",
    dismissed: "same note",
    left: "same note",
    limit: "stopping fail-over",
    "native-limit": "stopping fail-over",
    "own-switch": "stopping fail-over",
    "turn-boundary": "stopping move-on",
    exit: "ended none",
    "failing-exit": "ended none",
    signal: "stopping stop",
  },
  "kept-running": { drawn: "same none", exit: "ended none", "failing-exit": "ended none", signal: "stopping stop" },
  stopping: { exit: "ended none", "failing-exit": "ended none" },
  ended: {},
};

const cells = RUN_STATES.flatMap((state) => RUN_EVENTS.map((event) => [state, event, EXPECTED[state][event] ?? "ignored"] as const));

describe("the run's transitions", () => {
  it.each(cells)("%s + %s → %s", (state, event, expected) => {
    const move = nextMove(state, event, FAILOVER);
    const shown = move ? `${move.to === state && state !== "ended" ? "same" : move.to} ${move.effect}` : "ignored";
    expect(shown).toBe(expected);
  });

  it("lists every state and event once", () => {
    expect(new Set(RUN_STATES).size).toBe(11);
    expect(new Set(RUN_EVENTS).size).toBe(25);
  });
});

describe("two things at once", () => {
  const none: LimitProposals = { switchModel: false, agentWaits: false, failover: false };
  it.each([
    // a per-model limit the entry switches in place, whose agent also offers its own wait: the switch first
    ["working", "limit", { switchModel: true, agentWaits: true, failover: true }, "switching switch-model"],
    // the switch did not take: the agent's own wait, which the entry allows, before another entry
    ["switching", "switch-failed", { switchModel: true, agentWaits: true, failover: true }, "agent-waits leave-to-agent"],
    ["switching", "switch-failed", { switchModel: true, agentWaits: false, failover: true }, "stopping fail-over"],
    // a limit while the switch is under way is the switch's to judge
    ["switching", "limit", { switchModel: false, agentWaits: false, failover: true }, "ignored"],
    // the agent's own numbers never switch a model: only a printed per-model limit does
    ["working", "native-limit", { switchModel: true, agentWaits: false, failover: true }, "stopping fail-over"],
    // no other entry: the agent keeps running
    ["limit-seen", "limit", none, "kept-running keep-running"],
    // a limit seen while moving on is settled at once, not at the turn boundary
    ["moving-on", "limit", { switchModel: false, agentWaits: true, failover: true }, "agent-waits leave-to-agent"],
    // a rest another session wrote while the receiver has not shown its sign: moving on at the turn boundary
    ["receiving", "rest-elsewhere", none, "moving-on await-boundary"],
    // an agent's own model switch the entry allows: noted, and it goes on where it was
    ["limit-seen", "own-switch", { switchModel: false, agentWaits: true, failover: true }, "limit-seen note-own-switch"],
    // the quiet window running when the agent exits failing: the run is over (the detector has read the exit)
    ["limit-seen", "failing-exit", none, "ended none"],
    // a signal during the agent's own wait stops it
    ["agent-waits", "signal", none, "stopping stop"],
    // a second rest or a rotation while already moving on changes nothing
    ["moving-on", "rest-elsewhere", none, "ignored"],
    ["moving-on", "native-low", none, "ignored"],
    // keys typed while the agent is stopped are the host's to hold: the state does not move
    ["stopping", "keys", none, "ignored"],
  ] as [RunState, RunEventType, LimitProposals, string][])("%s + %s %o → %s", (state, event, proposals, expected) => {
    const move = nextMove(state, event, proposals);
    expect(move ? `${move.to} ${move.effect}` : "ignored").toBe(expected);
  });

  it("tells each move, and a state stays put on events it ignores", () => {
    const moves: string[] = [];
    const machine = new RunMachine("receiving", (move) => moves.push(`${move.from} → ${move.to}: ${move.why}`));
    machine.feed("question");
    machine.feed("keys");
    machine.feed("took");
    machine.feed("switch-took");
    machine.feed("candidate");
    machine.feed("limit", { switchModel: false, agentWaits: true, failover: true });
    machine.feed("failing-exit");
    expect(machine.state).toBe("ended");
    expect(moves).toEqual([
      "receiving → asking: it asks the user a question first",
      "asking → asking: the user answered the agent",
      "asking → working: it took the conversation",
      "working → limit-seen: limit-like text drawn",
      "limit-seen → agent-waits: its allowance is gone",
      "agent-waits → ended: it stopped for good while it waited",
    ]);
  });
});

describe("docs/architecture.md", () => {
  it("draws the table the run decides by", () => {
    const root = dirname(dirname(fileURLToPath(import.meta.url)));
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const table = /<!-- transitions:start -->\n([\s\S]*?)\n<!-- transitions:end -->/.exec(doc)![1]!;
    expect(table.split("\n")).toEqual(transitionRows());
  });
});
