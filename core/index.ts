// The public API for provider packs and adapters; the test helper for packs is "uuldana/testing" (core/testing.ts).
export { defineProvider, type NativeQuota, type ProviderAdapter, type ProviderVerdict, type QuotaQuery, type Transcript, type TranscriptQuery, type Turn } from "./registry/adapter.js";
export { LEVELS, type Level } from "./config/levels.js";
export type { Entry } from "./config/config.js";
export type { LevelFlags, Manifest, PromptMode } from "./registry/types.js";
export { PROVIDER_API } from "./registry/manifest.js";
export type { LimitKind, Verdict } from "./reader/reader.js";
export { filesIn, jsonLines, readFirstLine, readTranscriptFile, TRANSCRIPT_MAX_BYTES, type FoundFile } from "./registry/transcript-files.js";
export { statusRelayCommand } from "./registry/status-relay-command.js";
