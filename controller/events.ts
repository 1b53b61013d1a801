// The controller's Events on Services (shared/events.ts) over @kubernetes/client-node: repeats of the same event
// are counted on one Event object, so the controller's role may patch Events.
import type { CoreV1Api, CoreV1Event } from "@kubernetes/client-node";
import { EventRecorder } from "../shared/events.ts";
import type { Logger } from "../shared/log.ts";
import { mergePatch } from "../shared/patch.ts";

export function controllerEvents(core: CoreV1Api, log: Logger): EventRecorder {
  return new EventRecorder(
    {
      create: (namespace, body) => core.createNamespacedEvent({ namespace, body: body as CoreV1Event }),
      mergePatch: (namespace, name, body) => core.patchNamespacedEvent({ name, namespace, body }, mergePatch),
    },
    log,
    { component: "portico-controller", aggregate: true },
  );
}
