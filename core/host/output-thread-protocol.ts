// What the main thread and the output thread (output-worker.ts) share: the slots of their control array and the
// words they send each other.

// set to 1 when a word was sent: the output thread reads its words after its next read
export const WORDS = 0;
// 1: the output thread ends at its next look, whatever is left unread
export const STOP = 1;
// 1: the agent's process has exited; the output thread ends at the terminal's end, or at a knock after this
export const GONE = 2;
// 1: uuldana's prompt covers the screen and the agent's output is held back
export const HOLD = 3;
// 1 while the output thread writes to the user's terminal; it looks at HOLD after setting this, and uuldana's prompt
// draws only once this is 0 after setting HOLD, so the two never write over each other
export const WRITING = 4;
// 1 once the output thread writes no more to the user's terminal
export const DONE = 5;
// knocks the main thread made (OwnReading.knock) that the output thread has not yet counted
export const KNOCKS = 6;
export const CONTROL_SLOTS = 7;

// the most bytes of the agent's output held while uuldana's prompt covers its screen, by the output thread or by the
// main thread on node-pty's event path; what comes beyond is dropped
export const HELD_LIMIT = 8 * 1024 * 1024;

export interface OutputThreadSetup {
  // the agent's terminal, read; the user's terminal, written
  fd: number;
  out: number;
  control: SharedArrayBuffer;
  // uuldana's part of the title, which the agent's own title follows
  titlePrefix: string;
}

// main thread → output thread
export interface ToOutputThread {
  titlePrefix?: string;
}

// output thread → main thread: the agent's title changed, bytes came after a quiet spell, what was still held
// back when the output ended, the output has ended
export interface FromOutputThread {
  agentTitle?: string;
  wake?: true;
  held?: Uint8Array;
  end?: true;
}
