// Agent-like output: prose, tool calls, code and diffs (WORK), and near misses that carry the words of a limit
// without the allowance being gone (NEAR). Shared by the reader and CPU benchmarks.
export const WORK = [
  "I'll start by reading the parser module to see how tokens are produced.",
  "  const tokens = lexer.tokenize(source); // split the input",
  "⏺ Update(src/parser.ts)",
  "  ⎿  Updated src/parser.ts with 12 additions and 3 removals",
  "+    if (token.kind === 'eof') return node;",
  "-    if (token.kind == 'eof') { return node }",
  "Running the test suite now; 142 tests so far, 3 failing.",
  "✻ Thinking… (12s · esc to interrupt)",
  "Here is a summary of the changes I made to the error handling code.",
  "│ > Try \"fix the failing tests\"                                          │",
  "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
  "Should I also update the documentation for the new flag?",
  "  src/lexer.ts:88:14 - note: the scanner now keeps track of line and column",
  "All 145 tests pass. The refactor is complete and the public API is unchanged.",
];

export const NEAR = [
  "You've used 45% of your weekly limit · resets Mon 9am",
  "Rate limit reached for requests per minute. Retrying in 5s…",
  "The context window is 80% full; older turns will be summarised soon.",
];
