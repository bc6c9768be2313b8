import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { createClient } from "@redis/client";

// A real redis-server (or valkey-server) from the machine's packages for the shared rest store's tests: on a free
// port, in a temporary folder, keeping nothing on disk; stopped, paused, killed and started again as a test says. And
// a small forwarding proxy in front of it that can stop forwarding (a partition) and resume.

export const SERVER = ["redis-server", "valkey-server"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);

export class RedisServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), "uuldana-redis-"));

  private constructor(readonly port: number, readonly password: string | undefined) {}

  static async start(password?: string): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), password);
    await server.begin();
    return server;
  }

  url(password = this.password, port = this.port): string {
    return `redis://${password ? `:${encodeURIComponent(password)}@` : ""}127.0.0.1:${port}`;
  }

  // Starts the server (again, empty) on its port.
  async begin(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir, ...(this.password ? ["--requirepass", this.password] : [])];
    this.child = spawn(SERVER!, args, { stdio: "ignore" });
    for (let tries = 0; tries < 200; tries++) {
      if (await this.answers()) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${SERVER} did not start on port ${this.port}`);
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await gone;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  // A command sent straight to the server (the test's own client).
  async command(args: string[]): Promise<unknown> {
    const client = createClient({ url: this.url(), socket: { reconnectStrategy: false } });
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await client.sendCommand(args);
    } finally {
      client.destroy();
    }
  }

  private answers(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = createConnection({ port: this.port, host: "127.0.0.1" });
      socket.on("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  }
}

// Forwards connections to a port; cut() stops forwarding (connections stay open, nothing passes, new ones get no
// answer), restore() forwards again.
export class Proxy {
  private cutOff = false;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(target: number): Promise<Proxy> {
    let proxy: Proxy | undefined;
    const server = createServer((client) => proxy!.pair(client, target));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    proxy = new Proxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  cut(): void {
    this.cutOff = true;
  }

  restore(): void {
    this.cutOff = false;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pair(client: Socket, target: number): void {
    const upstream = createConnection({ port: target, host: "127.0.0.1" });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on("data", (data) => {
        if (!this.cutOff) to.write(data);
      });
      from.on("error", () => to.destroy());
      from.on("close", () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
