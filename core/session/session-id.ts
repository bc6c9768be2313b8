import { randomBytes } from "node:crypto";

// A short id that sorts by creation time: seconds since 2025 in base 36, then four random base-36 characters.
export function newSessionId(now: Date = new Date()): string {
  const seconds = Math.floor((now.getTime() - Date.UTC(2025, 0, 1)) / 1000);
  const random = randomBytes(4).readUInt32BE(0).toString(36).padStart(4, "0").slice(-4);
  return `${seconds.toString(36).padStart(6, "0")}${random}`;
}
