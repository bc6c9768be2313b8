// The screen model's own thread: parsing the agent's output here keeps it off the pass-through path.
import { parentPort, workerData } from "node:worker_threads";

import { Screen, type ScreenOptions } from "./screen.js";
import type { ScreenRequest, ScreenUpdate } from "./screen-proxy.js";

const port = parentPort!;
const screen = new Screen(workerData as ScreenOptions);
let parsed = 0;

const post = (update: ScreenUpdate): void => port.postMessage(update);

function progress(): Extract<ScreenUpdate, { type: "progress" }> {
  return { type: "progress", parsed, modes: screen.modes, dropped: screen.droppedChars };
}

// after each parsed batch: how far the model has got, the modes the agent has switched on, the lines it drew and
// where they changed
screen.onParsed(() => {
  post(progress());
  const drawn = screen.takeDrawn();
  if (drawn.lines.length || drawn.redrawn.length) post({ type: "drawn", ...drawn });
});

port.on("message", (request: ScreenRequest) => {
  switch (request.type) {
    case "write":
      screen.write(Buffer.from(request.data.buffer, request.data.byteOffset, request.data.byteLength), () => {
        parsed += request.data.byteLength;
      });
      break;
    case "resize":
      screen.resize(request.cols, request.rows);
      break;
    case "replies":
      screen.onReply((data) => post({ type: "reply", data }));
      break;
    case "read":
      void screen.settle().then(() => {
        post({
          ...progress(),
          type: "read",
          id: request.id,
          visible: screen.visible(),
          changed: request.changed ? screen.changedLines() : [],
          conversation: request.conversation ? screen.conversation() : "",
        });
      });
      break;
  }
});
