import type { DetectorEvent } from "../reader/detector.js";
import type { LimitKind } from "../reader/reader.js";
import type { NativeQuota } from "../registry/adapter.js";
import type { Cooldown } from "./cooldowns.js";
import { formatInstant } from "./eligibility.js";
import type { QuotaWindow } from "./quota-store.js";
import type { LimitEvent } from "./result.js";

// What each kind of event that ends or moves a run means for the session, as a LimitEvent: until when the entry
// rests and whether another entry takes over. Pure, but for the clock the rests are counted from.

// Whether another entry can take over when this one's allowance is gone, and why not, when it cannot.
export interface FailoverFacts {
  failover: boolean;
  why: string;
}

// The kinds of limit the agents' own windows are.
const WINDOW_KINDS: Record<string, LimitKind> = { five_hour: "session", seven_day: "weekly", seven_day_opus: "per-model", seven_day_sonnet: "per-model", primary: "session", secondary: "weekly" };

// What a limit not yet settled says of the session's next step: another entry takes over, or (failover off, no other
// entry) the agent keeps running, and why.
export function settling(options: FailoverFacts): Pick<LimitEvent, "rested" | "action" | "why" | "cooldownNotice"> {
  return { rested: false, action: options.failover ? "failover" : "kept running", why: options.failover ? undefined : options.why, cooldownNotice: undefined };
}

// What a stop means for this session: until when the entry rests, and whether another entry takes over.
export function limitEvent(event: Extract<DetectorEvent, { type: "stop" }>, cooldownMinutes: number, options: FailoverFacts): LimitEvent {
  const reset = event.verdict.reset_at ? new Date(event.verdict.reset_at) : undefined;
  const restsUntil = reset && reset.getTime() > Date.now() ? reset : new Date(Date.now() + cooldownMinutes * 60_000);
  return {
    source: "inferred",
    reason: "limit",
    kind: event.verdict.kind,
    resetAt: event.verdict.reset_at,
    text: event.text,
    after: event.after,
    restsUntil,
    ...settling(options),
  };
}

// A printed stop that the agent's own numbers confirm: native, with their reset, the printed text kept.
export function withNative(printed: LimitEvent, native: NonNullable<NativeQuota["exhausted"]>, cooldownMinutes: number): LimitEvent {
  const resetAt = native.reset_at ?? printed.resetAt;
  return { ...printed, source: "native", kind: (native.kind as LimitKind | undefined) ?? printed.kind, resetAt, restsUntil: restUntil(resetAt, cooldownMinutes) };
}

// Another uuldana session rested this entry (or the model it runs on): the same account is at the wall.
export function sharedRest(row: Cooldown, cooldownMinutes: number): LimitEvent {
  const resetAt = row.until.toISOString();
  return {
    source: row.source === "native" ? "native" : "inferred",
    reason: "shared-rest",
    kind: (row.kind as LimitKind | undefined) ?? "unknown",
    resetAt,
    text: `another uuldana session rested it${row.model ? ` (its model ${row.model})` : ""}: ${row.text ?? "its usage allowance is gone"}`,
    after: "turn boundary",
    restsUntil: restUntil(resetAt, cooldownMinutes),
    rested: true,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// An entry higher in the list has rested: the session goes back to it; nothing ran out here.
export function goingHome(home: { entry: string; until: Date }): LimitEvent {
  return {
    source: "inferred",
    reason: "home",
    kind: "unknown",
    resetAt: null,
    text: `${home.entry} has rested (its allowance returned at ${formatInstant(home.until)})`,
    after: "turn boundary",
    home: { entry: home.entry, until: home.until.toISOString() },
    restsUntil: new Date(),
    rested: false,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// The agent switched itself to another model at a limit (native_wait "failover"): that model's allowance is gone.
export function nativeSwitch(text: string, cooldownMinutes: number, options: FailoverFacts): LimitEvent {
  return {
    source: "inferred",
    reason: "limit",
    kind: "per-model",
    resetAt: null,
    text,
    after: "its own switch",
    restsUntil: restUntil(null, cooldownMinutes),
    ...settling(options),
  };
}

// The allowance gone by the agent's own account, with nothing printed that the reader took for it.
export function nativeLimit(native: NonNullable<NativeQuota["exhausted"]>, cooldownMinutes: number, options: FailoverFacts): LimitEvent {
  const resetAt = native.reset_at ?? null;
  return {
    source: "native",
    reason: "limit",
    kind: (native.kind as LimitKind | undefined) ?? "unknown",
    resetAt,
    text: native.text ?? "its own quota reading says the allowance is gone",
    after: "native",
    restsUntil: restUntil(resetAt, cooldownMinutes),
    ...settling(options),
  };
}

// A window nearly spent: the session moves on before the wall, and the entry rests until that window resets (so a
// reading just above the threshold cannot bring it back before then).
export function rotation(low: { name: string; percentLeft: number; resetsAt: string | undefined }, threshold: number, cooldownMinutes: number): LimitEvent {
  const resetAt = low.resetsAt ?? null;
  return {
    source: "native",
    reason: "rotate",
    kind: windowKind(low.name),
    resetAt,
    text: `its ${low.name} window had ${formatPercent(low.percentLeft)} left, at or below rotate_at_percent_left ${threshold}`,
    after: "turn boundary",
    window: { name: low.name, percentLeft: low.percentLeft, threshold },
    restsUntil: restUntil(resetAt, cooldownMinutes),
    rested: false,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// The agent was told to wrap up because its window is nearly spent (Claude Code's note near 95% of its window), and
// the entry rotates before the wall: a rotation read from its screen, the window unnamed and about 5% left.
export function wrapUpRotation(line: string, threshold: number, cooldownMinutes: number): LimitEvent {
  return {
    source: "inferred",
    reason: "rotate",
    kind: "unknown",
    resetAt: null,
    text: `it was told to wrap up, its window nearly spent ("${line}")`,
    after: "turn boundary",
    window: { name: "wrap-up", percentLeft: WRAP_UP_PERCENT_LEFT, threshold },
    restsUntil: restUntil(null, cooldownMinutes),
    rested: false,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// What is left of a window when the agent is told to wrap up: its vendor sends the note near 95% used.
const WRAP_UP_PERCENT_LEFT = 5;

// The kind of limit a window is: by its name, and a named limit's own window ("<model> primary") is that model's.
function windowKind(name: string): LimitKind {
  return WINDOW_KINDS[name] ?? (/ (?:primary|secondary)$/.test(name) ? "per-model" : "unknown");
}

// The window with the least share left, when the reading has one.
export function lowestWindow(reading: NativeQuota): { name: string; percentLeft: number; resetsAt: string | undefined } | undefined {
  let low: { name: string; percentLeft: number; resetsAt: string | undefined } | undefined;
  for (const window of reading.windows) {
    const percentLeft = Math.max(0, Math.min(100, 100 - window.usedPercent));
    if (!low || percentLeft < low.percentLeft) low = { name: window.name, percentLeft, resetsAt: window.resetsAt };
  }
  return low;
}

export function storedWindows(reading: NativeQuota): QuotaWindow[] {
  return reading.windows.map((window) => ({ name: window.name, usedPercent: window.usedPercent, resetsAt: window.resetsAt ? new Date(window.resetsAt) : undefined, windowMinutes: window.windowMinutes }));
}

// Until when an entry rests: the reset, when it is ahead, else the configured cooldown.
export function restUntil(resetAt: string | null, cooldownMinutes: number): Date {
  const reset = resetAt ? new Date(resetAt) : undefined;
  return reset && reset.getTime() > Date.now() ? reset : new Date(Date.now() + cooldownMinutes * 60_000);
}

function formatPercent(value: number): string {
  return `${Math.round(value * 10) / 10}%`;
}
