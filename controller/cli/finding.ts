// One line of `porticoctl doctor`: a check, how it came out, what was seen, and the fix for what is wrong.
export interface Finding {
  check: string;
  result: "ok" | "warn" | "bad";
  detail: string;
  fix?: string;
}
