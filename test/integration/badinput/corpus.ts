// A bad-input case: what is asked for, and the refusal it must get (see expectRefused in the harness).
import type { V1Service } from "@kubernetes/client-node";

export interface Case {
  name: string;
  annotations?: Record<string, string>;
  spec?: Partial<NonNullable<V1Service["spec"]>>;
  reason: string;
  /** Text the message must contain: the field, and where one applies, the fix. */
  mentions: string[];
}
