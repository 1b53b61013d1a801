/**
 * A failure of the test environment itself (a tool missing, a port taken, a process that died), as opposed
 * to a failing test. Its message is one line naming what is wrong and how to fix it; the runner prints it
 * without a stack trace.
 */
export class EnvironmentError extends Error {
  override name = "EnvironmentError";
  constructor(message: string) {
    super(message);
    this.stack = `${this.name}: ${message}`;
  }
}
