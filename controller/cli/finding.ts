/**
 * Every check `porticoctl doctor` reports, in the order it runs them. `targets` takes the place of `nodes` when
 * the provider refuses the Service. docs/troubleshooting.md has a section for each (a unit test holds them equal).
 */
export const DOCTOR_CHECKS = [
  "Service",
  "class",
  "controller",
  "last reconcile",
  "traffic",
  "BGP",
  "provider",
  "cloud targets",
  "cloud",
  "targets",
  "nodes",
  "selector",
  "endpoints",
  "health checks",
] as const;

export type DoctorCheck = (typeof DOCTOR_CHECKS)[number];

// One line of `porticoctl doctor`: a check, how it came out, what was seen, and the fix for what is wrong.
export interface Finding {
  check: DoctorCheck;
  result: "ok" | "warn" | "bad";
  detail: string;
  fix?: string;
}
