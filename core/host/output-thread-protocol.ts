// What the main thread and the output thread (output-worker.ts) share: the slots of their control array and the
// words they send each other.

// set to 1 (and notified) to have the output thread look at once: a key went to the agent, or a word was sent
export const WAKE = 0;
// 1: the output thread ends now, whatever is left unread
export const STOP = 1;
// 1: the agent's process has exited; the output thread ends once the terminal has nothing more to read
export const GONE = 2;
// 1: uuldana's prompt covers the screen and the agent's output is held back; HELD is 1 once the thread holds it
export const HOLD = 3;
export const HELD = 4;
// 1 once the output thread writes no more to the user's terminal
export const DONE = 5;
export const CONTROL_SLOTS = 6;

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
