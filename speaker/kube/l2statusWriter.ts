// Writes the ServiceL2Status records planned by speaker/l2statusPlan.ts.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { L2StatusFields } from "../../providers/metal/l2status.ts";
import { L2_RECORDS } from "../l2statusPlan.ts";
import { RecordWriter } from "./recordWriter.ts";

export class L2StatusWriter extends RecordWriter<L2StatusFields> {
  constructor(
    kc: KubeConfig,
    log: Logger,
    counted: (outcome: "created" | "updated" | "deleted" | "failed") => void,
    retry: () => void,
  ) {
    super(L2_RECORDS, kc, log, counted, retry);
  }
}
