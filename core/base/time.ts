export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// "3m12s", "45s", "1h02m": how long something took, for people.
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

// "3 days", "5 hours", "40 minutes": how long until something, for people (at least a minute).
export function formatWait(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes >= 2880) return `${Math.round(minutes / 1440)} days`;
  if (minutes >= 120) return `${Math.round(minutes / 60)} hours`;
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}
