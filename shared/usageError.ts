// A command line or configuration the program cannot run with: both programs print its message and exit 2.
export class UsageError extends Error {
  override name = "UsageError";
}
