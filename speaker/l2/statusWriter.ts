// Writes the ServiceL2Status records planned by speaker/l2/statusPlan.ts: the record writer of speaker/kube/
// given the L2 mode's kind of record, kept here so that speaker/kube/ knows nothing of the modes.
import type { Logger } from "pino";
import type { L2StatusFields } from "../../shared/l2status.ts";
import { L2_RECORDS } from "./statusPlan.ts";
import type { KubeApi } from "../kube/api/client.ts";
import { RecordWriter } from "../kube/recordWriter.ts";

export class L2StatusWriter extends RecordWriter<L2StatusFields> {
  constructor(
    api: KubeApi,
    log: Logger,
    counted: (outcome: "created" | "updated" | "deleted" | "failed") => void,
    retry: () => void,
  ) {
    super(L2_RECORDS, api, log, counted, retry);
  }
}
