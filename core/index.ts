// The public API for provider packs and adapters.
export { defineProvider, type ProviderAdapter } from "./adapter.js";
export { LEVELS, type Level } from "./levels.js";
export type { Entry, LevelFlags, Manifest, PromptMode } from "./types.js";
