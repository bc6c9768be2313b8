// The one place that reaches into node-pty beyond its public interface (its version is pinned exactly in
// package.json, and test/pty-internals.test.ts fails if an upgrade changes what is used here):
// - the moment the agent's process has exited, before node-pty reports it: node-pty then waits for its terminal to
//   close, and starts that wait by listening for "close" on its own socket;
// - the terminal's other side (the master) read by uuldana itself: node-pty's socket is kept from ever reading it,
//   and closed by uuldana once its own reading has ended, which is what lets node-pty report the exit. node-pty
//   destroys that socket on its own 200 ms after the exit; that is put off until uuldana's reading has ended, or a
//   reader slowed by a busy machine would find the terminal closed under it (and the number maybe reused) and lose
//   the agent's last output;
// - the terminal made blocking through that socket's handle (libuv's own switch for a stream), so that uuldana's
//   output thread sleeps in its read until the agent writes, instead of looking again and again.

export interface NodePtyInternals {
  fd?: number;
  on(event: string, listener: (...args: unknown[]) => void): void;
  _socket?: { _read?: unknown; destroy?: () => void; _handle?: { setBlocking?: (blocking: boolean) => number } };
}

// Calls back once the agent's process has exited, while node-pty still waits for its terminal to close.
export function onProcessExit(child: NodePtyInternals, listener: () => void): void {
  let called = false;
  child.on("newListener", (event) => {
    if (event !== "close" || called) return;
    called = true;
    listener();
  });
}

export interface OwnMaster {
  readonly fd: number;
  // uuldana's reading has ended: node-pty's socket closes the terminal, and node-pty reports the exit
  close(): void;
  // Whether a read or write of the terminal waits (the file's own flag, shared by every thread that uses it).
  setBlocking(blocking: boolean): void;
}

// Takes the master away from node-pty's own reading, at once after the spawn (node-pty starts reading a moment
// later); undefined where this node-pty has not the parts this needs, and its own reading goes on.
export function takeMaster(child: NodePtyInternals): OwnMaster | undefined {
  const socket = child._socket;
  const handle = socket?._handle;
  if (typeof child.fd !== "number" || !socket || typeof socket._read !== "function" || typeof socket.destroy !== "function") return undefined;
  if (typeof handle?.setBlocking !== "function") return undefined;
  // the socket asks for data through _read alone: answered with nothing, it never starts reading the terminal
  socket._read = () => undefined;
  handle.setBlocking!(true);
  const destroy = socket.destroy.bind(socket);
  let closed = false;
  // node-pty's own destroy (its timer after the exit) waits for close()
  socket.destroy = () => (closed ? destroy() : undefined);
  return {
    fd: child.fd,
    close() {
      if (closed) return;
      closed = true;
      destroy();
    },
    setBlocking(blocking) {
      if (!closed) handle.setBlocking!(blocking);
    },
  };
}
