import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";

export const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
/** Strategic merge patch: lists with a merge key (like status.conditions by type) are merged, not replaced. */
export const strategicMergePatch = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);
