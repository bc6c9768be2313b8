// Medians and the slow end of a set of samples, and the units the table prints them in.

// Median and 95th percentile (nearest rank); with few samples the p95 is simply the worst one.
export function stats(samples) {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const p95 = sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)];
  return { median, p95, runs: sorted.length };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const since = (start) => Number(process.hrtime.bigint() - start) / 1e6;

// Each unit prints a number or n/a, so a missing measurement keeps its row.
const unit = (digits, suffix) => (value) => (Number.isFinite(value) ? `${value.toFixed(digits)} ${suffix}` : "n/a");
export const fmt = {
  ms: unit(0, "ms"),
  us: unit(0, "µs"),
  mbps: unit(0, "MB/s"),
  mb: unit(0, "MB"),
  pct: unit(1, "%"),
  pct2: unit(2, "%"),
};

// This row's value over its baseline's, in the row's own unit.
export function ratio(value, baseline) {
  return Number.isFinite(value) && Number.isFinite(baseline) && baseline > 0 ? `${(value / baseline).toFixed(2)}x` : "n/a";
}

const mark = (met) => (met ? "✓" : "✗");

// A goal with a fixed bound, judged on this run's figure: its text and ✓ or ✗, or n/a when the figure is missing.
export function goal(text, value, meets) {
  return Number.isFinite(value) ? `${text} ${mark(meets(value))}` : `${text}: n/a`;
}

// A goal that names a baseline: its text, the ratio to that baseline it is judged on (as printed), and ✓ or ✗.
export function ratioGoal(text, value, baseline, meets) {
  if (!(Number.isFinite(value) && Number.isFinite(baseline) && baseline > 0)) return `${text}: n/a`;
  const printed = (value / baseline).toFixed(2);
  return `${text}: ${printed}× ${mark(meets(Number(printed)))}`;
}
