import { createServer } from "node:net";
import { EnvironmentError } from "./errors.ts";

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice, so parallel runs do not collide). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("no port assigned"));
      });
    });
  });
}

/** Fails with one line when a port someone asked for explicitly is already taken. */
export function assertPortFree(port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", () =>
      reject(
        new EnvironmentError(
          `port ${port} for ${what} is already in use: stop whatever listens there or choose another port`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}
