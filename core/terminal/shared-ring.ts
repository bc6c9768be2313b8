// A ring of bytes in shared memory between one writing thread and one reading thread. The writer waits while the
// ring is full (it slows down, it never drops a byte); the reader takes what is there whenever it likes, and is never
// woken per write. Positions are counters that wrap at 2^32; the capacity is a power of two, so a counter masked
// by it is a place in the ring.

// the header's slots: total bytes written, total bytes read, and whether the reader sleeps until told
const WRITTEN = 0;
const READ = 1;
const SLEEPING = 2;
const HEADER_SLOTS = 4;

export interface RingMemory {
  header: SharedArrayBuffer;
  data: SharedArrayBuffer;
}

export function ringMemory(capacity: number): RingMemory {
  if (capacity & (capacity - 1)) throw new Error(`a ring's capacity must be a power of two, not ${capacity}`);
  return { header: new SharedArrayBuffer(HEADER_SLOTS * 4), data: new SharedArrayBuffer(capacity) };
}

class RingSide {
  protected readonly header: Int32Array;
  protected readonly data: Uint8Array;
  protected readonly mask: number;

  constructor(memory: RingMemory) {
    this.header = new Int32Array(memory.header);
    this.data = new Uint8Array(memory.data);
    this.mask = this.data.length - 1;
  }

  // bytes written and not yet read
  get used(): number {
    return (Atomics.load(this.header, WRITTEN) - Atomics.load(this.header, READ)) >>> 0;
  }
}

export class RingWriter extends RingSide {
  // Copies all of bytes in, waiting (a while at a time, until gaveUp says so) while the ring has no room for them.
  // Returns true once the reader was asleep and must be told (the first bytes after a quiet spell).
  put(bytes: Uint8Array, gaveUp: () => boolean): boolean {
    let at = 0;
    while (at < bytes.length) {
      const room = this.data.length - this.used;
      if (room === 0) {
        if (gaveUp()) return false;
        // the reader notifies READ after each take
        Atomics.wait(this.header, READ, Atomics.load(this.header, READ), 5);
        continue;
      }
      const part = Math.min(room, bytes.length - at);
      const written = Atomics.load(this.header, WRITTEN);
      const start = written & this.mask;
      const first = Math.min(part, this.data.length - start);
      this.data.set(bytes.subarray(at, at + first), start);
      if (part > first) this.data.set(bytes.subarray(at + first, at + part), 0);
      Atomics.store(this.header, WRITTEN, (written + part) | 0);
      at += part;
    }
    return Atomics.compareExchange(this.header, SLEEPING, 1, 0) === 1;
  }
}

export class RingReader extends RingSide {
  // Everything written so far that was not yet taken (an empty buffer if nothing), and room given back to the writer.
  take(): Buffer {
    const read = Atomics.load(this.header, READ);
    const count = (Atomics.load(this.header, WRITTEN) - read) >>> 0;
    if (count === 0) return Buffer.alloc(0);
    const out = Buffer.allocUnsafe(count);
    const start = read & this.mask;
    const first = Math.min(count, this.data.length - start);
    out.set(this.data.subarray(start, start + first), 0);
    if (count > first) out.set(this.data.subarray(0, count - first), first);
    Atomics.store(this.header, READ, (read + count) | 0);
    Atomics.notify(this.header, READ);
    return out;
  }

  // The reader stops looking until the writer says bytes came (put returns true). False if bytes are already
  // there: then it must take them rather than sleep.
  sleep(): boolean {
    Atomics.store(this.header, SLEEPING, 1);
    if (this.used === 0) return true;
    Atomics.store(this.header, SLEEPING, 0);
    return false;
  }

  // The reader looks again on its own.
  wake(): void {
    Atomics.store(this.header, SLEEPING, 0);
  }
}
