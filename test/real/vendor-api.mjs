// The three vendors' wire formats as the real CLIs read them, for servers on loopback: a normal streamed answer
// and the plan-limit error each vendor sends when the allowance is gone.

// Anthropic's Messages API, streamed: the events Claude Code needs to draw one finished text answer (with the
// response headers given, such as the unified rate-limit ones).
export function anthropicAnswer(res, text, headers = {}) {
  res.writeHead(200, { "content-type": "text/event-stream", ...headers });
  const events = [
    ["message_start", { type: "message_start", message: { id: "msg_loopback", type: "message", role: "assistant", model: "claude-loopback", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  res.end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(""));
}

// OpenAI's Responses API, streamed: Codex takes the finished message item and waits for response.completed.
export function responsesAnswer(res, text) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const item = { type: "message", id: "msg_loopback", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  const events = [
    { type: "response.created", response: { id: "resp_loopback" } },
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: item.id, delta: text },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_loopback", usage: { input_tokens: 12, input_tokens_details: null, output_tokens: 12, output_tokens_details: null, total_tokens: 24 } } },
  ];
  res.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(""));
}

// Gemini's generateContent, either as one JSON reply or as server-sent events (streamGenerateContent?alt=sse).
export function geminiAnswer(res, text, { stream }) {
  const reply = { candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 12, totalTokenCount: 24 } };
  res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
  res.end(stream ? `data: ${JSON.stringify(reply)}\r\n\r\n` : JSON.stringify(reply));
}

// What each vendor's API answers when the plan's allowance is gone, with the reset as Unix seconds.
export const LIMIT_REPLIES = {
  codex: (res, reset) => {
    res.writeHead(429, { "content-type": "application/json" });
    const resetsIn = Math.max(0, reset - Math.floor(Date.now() / 1000));
    res.end(JSON.stringify({ error: { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "plus", resets_in_seconds: resetsIn, resets_at: reset } }));
  },
  "claude-code": (res, reset) => {
    res.writeHead(429, {
      "content-type": "application/json",
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(reset),
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "x-should-retry": "false",
    });
    res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "Rate limited" } }));
  },
};

// Starts a stand-in server on a free loopback port: its base address, and how to close it with its connections.
export async function listenOnLoopback(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    close() {
      server.close();
      server.closeAllConnections();
    },
  };
}
