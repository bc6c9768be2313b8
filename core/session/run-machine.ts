// The states one run of one agent passes through, the events that move it, and the one table that decides what each
// event does in each state. Pure: the run feeds it events and carries out the effect of each move; policies (model
// switch, the agent's own wait, rotation, shared rests, going home, the receiver check) only propose events.

export type RunState =
  // handed the conversation, not yet shown to have taken it
  | "receiving"
  // handed the conversation, its screen asks the user a question first (trusting a folder, first-run choices)
  | "asking"
  // started without a handoff, its screen asks to sign in: left to the user
  | "signing-in"
  | "working"
  // limit-like text drawn, the quiet window running
  | "limit-seen"
  // switching to another model of the same agent at a per-model limit
  | "switching"
  // a limit left to the agent's own wait for its reset, or its own model switch
  | "agent-waits"
  // a window nearly spent, a rest written elsewhere or a preferred entry back: moving on at the next turn boundary
  | "moving-on"
  // a limit that no other entry can take over: the agent keeps running
  | "kept-running"
  | "stopping"
  | "ended";

export type RunEventType =
  // a batch of lines drawn; keys the user typed (never a terminal's reply)
  | "drawn"
  | "keys"
  // the detector: limit-like text seen, the agent worked past it, it was left on screen, or it was a stop
  | "candidate"
  | "dismissed"
  | "left"
  | "limit"
  // the agent's own numbers say the allowance is gone, and nothing printed said so in time
  | "native-limit"
  // the agent switched itself to another model (the line its manifest names)
  | "own-switch"
  | "switch-took"
  | "switch-failed"
  // a window at or below rotate_at_percent_left; a rest another session wrote; an entry higher in the list back
  | "native-low"
  | "rest-elsewhere"
  | "home-due"
  // the agent's own words say it spends paid credits, which the user's paid_usage does not let it
  | "paid-spend"
  // the agent's own wait for its reset is over without it going on (turned off, stopped after repeated limits)
  | "wait-ended"
  | "turn-boundary"
  // the receiver: it took the conversation, or did not in time; its screen asks to sign in, or asks a question
  | "took"
  | "not-taken"
  | "sign-in"
  | "question"
  // a first agent's sign-in screen is gone: the user signed in
  | "signed-in"
  // an agent handed the conversation asks to sign in after it seemed to take it (it echoed the prompt, then
  // refused: "Not logged in")
  | "sign-in-late"
  // the agent's process ended (with a failing status or signal, or not); uuldana was told to stop
  | "exit"
  | "failing-exit"
  | "signal";

export const RUN_EVENTS: readonly RunEventType[] = [
  "drawn", "keys", "candidate", "dismissed", "left", "limit", "native-limit", "own-switch", "switch-took", "switch-failed",
  "native-low", "rest-elsewhere", "home-due", "paid-spend", "wait-ended", "turn-boundary", "took", "not-taken", "sign-in", "question", "signed-in", "sign-in-late", "exit", "failing-exit", "signal",
];
export const RUN_STATES: readonly RunState[] = [
  "receiving", "asking", "signing-in", "working", "limit-seen", "switching", "agent-waits", "moving-on", "kept-running", "stopping", "ended",
];

// What the run does with a move.
export type Effect =
  // nothing but the new state
  | "none"
  // look at the screen: the receiver's signs, a switch under way, the agent's own switch line
  | "look"
  // the receiver gets its time again
  | "renew"
  // journal the detector's event (a dismissed one also marks the title)
  | "note"
  // a limit, settled by arbitration: the effect is one of the four below
  | "arbitrate"
  | "switch-model"
  | "leave-to-agent"
  | "fail-over"
  | "keep-running"
  // the agent switched itself and the entry allows it: journaled once
  | "note-own-switch"
  // wait for the next turn boundary, then move on for the reason the event gave
  | "await-boundary"
  | "move-on"
  // stop the agent without resting its entry (a receiver that did not take over, one that asks to sign in, a signal)
  | "stop"
  // the agent stopped for good while its limit was left to its own wait: the session moves on after all
  | "take-back"
  // the agent said its own wait for the reset is over without it going on: it is stopped and the session moves on
  | "take-back-stop";

export interface Move {
  event: RunEventType;
  from: RunState;
  to: RunState;
  effect: Effect;
  // why, in the words the journal and the architecture page use
  why: string;
}

// What a limit event brings to the arbitration: which policies propose to handle it, and whether another entry can
// take over at all.
export interface LimitProposals {
  // the entry switches models in place and another model of the agent is left
  switchModel: boolean;
  // the agent offers to wait or switch by itself, and the entry's native_wait allows it
  agentWaits: boolean;
  // another entry can take over (failover on, more than one entry)
  failover: boolean;
}

// When several policies apply to one limit, the first of these that proposes wins.
export const LIMIT_PRECEDENCE = ["switch-model", "leave-to-agent", "fail-over", "keep-running"] as const;

type Rule = { to: RunState | "same"; effect: Effect; why: string };

const same = (effect: Effect, why: string): Rule => ({ to: "same", effect, why });
const go = (to: RunState, effect: Effect, why: string): Rule => ({ to, effect, why });

// Events every live state treats alike.
const ALWAYS: Partial<Record<RunEventType, Rule>> = {
  exit: go("ended", "none", "the agent exited"),
  "failing-exit": go("ended", "none", "the agent exited failing"),
  signal: go("stopping", "stop", "uuldana was told to stop"),
};

// What a live agent's screen and numbers can do, in the states where it is working or may be.
const WATCHED: Partial<Record<RunEventType, Rule>> = {
  drawn: same("look", "the agent drew"),
  keys: same("renew", "the user typed (a receiver not yet decided gets its time again)"),
  candidate: go("limit-seen", "note", "limit-like text drawn"),
  limit: go("stopping", "arbitrate", "its allowance is gone"),
  "native-limit": go("stopping", "arbitrate", "its own numbers say the allowance is gone"),
  "own-switch": go("stopping", "arbitrate", "it switched its own model"),
  // a receiver that showed a limit or a wait before its sign
  took: same("none", "it took the conversation"),
  "not-taken": go("stopping", "stop", "it did not take the conversation"),
  "sign-in-late": go("stopping", "stop", "it asks to sign in after all"),
  "native-low": go("moving-on", "await-boundary", "a window is nearly spent"),
  "rest-elsewhere": go("moving-on", "await-boundary", "another session rested it"),
  "home-due": go("moving-on", "await-boundary", "an entry higher in the list is back"),
  "paid-spend": go("moving-on", "await-boundary", "it spends paid credits the user did not allow"),
};

// Before the receiver took the conversation: its signs are looked for, the user's keys give it its time again.
const RECEIVING: Partial<Record<RunEventType, Rule>> = {
  ...WATCHED,
  keys: same("renew", "the user answered the agent"),
  took: go("working", "none", "it took the conversation"),
  "not-taken": go("stopping", "stop", "it did not take the conversation"),
  "sign-in": go("stopping", "stop", "it asks to sign in"),
  question: go("asking", "none", "it asks the user a question first"),
};

// The one table: each state, each event it reacts to. An event a state does not list is ignored there.
export const TRANSITIONS: Record<RunState, Partial<Record<RunEventType, Rule>>> = {
  receiving: { ...RECEIVING, ...ALWAYS },
  asking: { ...RECEIVING, question: same("none", "it still asks the user"), ...ALWAYS },
  "signing-in": {
    ...WATCHED,
    keys: same("none", "the user signs in"),
    "signed-in": go("working", "none", "its sign-in screen is gone"),
    ...ALWAYS,
  },
  working: { ...WATCHED, "sign-in": go("signing-in", "none", "it asks the user to sign in"), ...ALWAYS },
  "limit-seen": {
    ...WATCHED,
    candidate: same("note", "more limit-like text drawn"),
    dismissed: go("working", "note", "the agent kept working"),
    left: go("working", "note", "the text stayed on screen with no stop"),
    ...ALWAYS,
    "failing-exit": go("ended", "none", "the agent exited failing before the quiet window ended"),
  },
  switching: {
    drawn: same("look", "the switch looks at what the agent drew"),
    "switch-took": go("working", "none", "the other model took the turn"),
    "switch-failed": go("stopping", "arbitrate", "the model switch did not take"),
    ...ALWAYS,
  },
  "agent-waits": {
    drawn: same("look", "the agent drew while it waits"),
    candidate: same("note", "limit-like text while it waits"),
    dismissed: same("note", "the agent worked past it"),
    left: same("note", "the text stayed on screen"),
    limit: go("stopping", "arbitrate", "a new limit while it waits"),
    ...ALWAYS,
    "failing-exit": go("ended", "take-back", "it stopped for good while it waited"),
    "wait-ended": go("stopping", "take-back-stop", "its own wait ended without it going on"),
    signal: go("stopping", "stop", "uuldana was told to stop while the agent waits"),
  },
  "moving-on": {
    drawn: same("look", "the agent drew"),
    candidate: same("note", "limit-like text while moving on"),
    dismissed: same("note", "the agent worked past it"),
    left: same("note", "the text stayed on screen"),
    limit: go("stopping", "arbitrate", "its allowance ran out before the turn boundary"),
    "native-limit": go("stopping", "arbitrate", "its own numbers say the allowance is gone"),
    "own-switch": go("stopping", "arbitrate", "it switched its own model"),
    "turn-boundary": go("stopping", "move-on", "the turn is over"),
    ...ALWAYS,
  },
  "kept-running": { drawn: same("none", "the agent drew"), ...ALWAYS },
  stopping: {
    exit: go("ended", "none", "the agent was stopped"),
    "failing-exit": go("ended", "none", "the agent was stopped"),
  },
  ended: {},
};

// The move an event makes in a state; a limit's arbitration picks where it goes from the policies' proposals.
export function nextMove(state: RunState, event: RunEventType, proposals?: LimitProposals): Move | undefined {
  const rule = TRANSITIONS[state][event];
  if (!rule) return undefined;
  const to = rule.to === "same" ? state : rule.to;
  if (rule.effect !== "arbitrate") return { event, from: state, to, effect: rule.effect, why: rule.why };
  const effect = arbitrate(proposals ?? { switchModel: false, agentWaits: false, failover: false }, event);
  // an agent's own model switch that the entry allows is noted and the agent goes on as it was
  if (event === "own-switch" && effect === "leave-to-agent") return { event, from: state, to: state, effect: "note-own-switch", why: "it switched its own model, as the entry allows" };
  return { event, from: state, to: SETTLED[effect], effect, why: rule.why };
}

// Which policy handles a limit, by LIMIT_PRECEDENCE: a failed switch is not tried again.
export function arbitrate(proposals: LimitProposals, event: RunEventType): (typeof LIMIT_PRECEDENCE)[number] {
  const applies = {
    "switch-model": proposals.switchModel && event === "limit",
    "leave-to-agent": proposals.agentWaits,
    "fail-over": proposals.failover,
    "keep-running": true,
  };
  return LIMIT_PRECEDENCE.find((effect) => applies[effect])!;
}

const SETTLED: Record<(typeof LIMIT_PRECEDENCE)[number], RunState> = {
  "switch-model": "switching",
  "leave-to-agent": "agent-waits",
  "fail-over": "stopping",
  "keep-running": "kept-running",
};

// One run's state, moved only by nextMove; told of each move.
export class RunMachine {
  private current: RunState;

  constructor(start: RunState, private readonly moved: (move: Move) => void = () => {}) {
    this.current = start;
  }

  get state(): RunState {
    return this.current;
  }

  // Feeds one event; the move it made, or undefined when the state ignores it.
  feed(event: RunEventType, proposals?: LimitProposals): Move | undefined {
    const move = nextMove(this.current, event, proposals);
    if (!move) return undefined;
    this.current = move.to;
    this.moved(move);
    return move;
  }
}

// The table as Markdown rows (state, event, where it goes, what the run does, why), for docs/architecture.md.
export function transitionRows(): string[] {
  const rows = ["| state | event | goes to | the run | why |", "| --- | --- | --- | --- | --- |"];
  for (const state of RUN_STATES) {
    for (const event of RUN_EVENTS) {
      const rule = TRANSITIONS[state][event];
      if (!rule) continue;
      const to = rule.to === "same" ? "(stays)" : rule.to;
      const effect = rule.effect === "arbitrate" ? `arbitrates: ${LIMIT_PRECEDENCE.join(" > ")}` : rule.effect;
      rows.push(`| ${state} | ${event} | ${to} | ${effect} | ${rule.why} |`);
    }
  }
  return rows;
}
