// The speaker talks to the apiserver through its own small client; tests hand it the same identity their own
// client uses (e.g. a ServiceAccount's token) by exporting that client's configuration.
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApi } from "../../speaker/kube/api/client.ts";

export function speakerApi(kc: KubeConfig): KubeApi {
  return KubeApi.fromKubeconfig(JSON.parse(kc.exportConfig()));
}
