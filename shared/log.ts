// Structured JSON logs (one object per line). Child loggers carry the Service key on every line.
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? "portico-controller",
    level: opts.level ?? process.env.PORTICO_LOG_LEVEL ?? "info",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that drops everything, for tests and tools that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
