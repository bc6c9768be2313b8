// The API error codes that say an allowance is gone, as agents print them from the APIs they call. An agent built on
// another vendor's API prints that vendor's codes, so each serves several agents, and one table holds them all: the
// only vendor wording the general reader keeps.

// Error codes and types, matched as whole words, case-insensitively.
export const ALLOWANCE_CODES: readonly string[] = [
  "insufficient_quota",
  "insufficient_credits",
  "insufficient_balance",
  "insufficient_funds",
  "usage_limit_reached",
  "usage_limit_exceeded",
  "quota_exceeded",
  "resource_exhausted",
  "billing_hard_limit_reached",
  "credit_balance_too_low",
  "out_of_credits",
  "QuotaFailure",
];

// Error class names of the same meaning (QuotaExceededError, UsageLimitExceeded, …), as regular-expression source.
export const ALLOWANCE_ERROR_NAMES = "(?:Quota|Usage)(?:Limit|Exceeded|Exhausted)(?:Error|Exception)?";

// Codes that say money or credit is what is short: the limit's kind is credits.
export const CREDIT_CODES: readonly string[] = ["insufficient_quota"];

// A status an API sends for "overloaded, try again later" besides HTTP's own 503.
export const OVERLOADED_STATUSES: readonly string[] = ["529"];
