// The example agent's adapter: what its manifest's data cannot say. A plain object of hooks; nothing here imports
// uuldana at run time (the type comment below is read by editors and TypeScript only).

/** @type {import("uuldana").ProviderAdapter} */
export default {
  // Its bean counter at zero is its allowance gone for the day, drawn without any word the general reader knows. Only
  // the counter as the agent draws it, ending its line: the same words quoted in an answer are no stop.
  classify(text) {
    const counter = /(?:^|\. )beans: 0 of (\d+) left today$/m.exec(text);
    if (!counter) return undefined;
    return { stop: true, kind: "daily", reason: `the example agent's bean counter is at 0 of ${counter[1]}` };
  },
  // Its footer, redrawn under every answer, is its own interface, not conversation.
  chrome(line) {
    return line.startsWith("── example ·");
  },
};
