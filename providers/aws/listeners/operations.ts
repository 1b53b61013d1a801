// The writes a plan makes to the NLB's listeners: each listener, and the certificates beyond its default one and
// its attributes, which ELBv2 keeps apart from it.
import type { DesiredListener, ListenerProtocol } from "../model.ts";

export type ListenerOperation =
  | { kind: "createListener"; listener: DesiredListener }
  | {
      kind: "modifyListener";
      listenerArn: string;
      listener: DesiredListener;
      /** The listener's protocol now: ModifyListener names the protocol only when it changes. */
      protocolNow: ListenerProtocol;
    }
  | { kind: "addListenerCertificates"; listenerArn: string; port: number; certificateArns: string[] }
  | { kind: "removeListenerCertificates"; listenerArn: string; port: number; certificateArns: string[] }
  | {
      kind: "modifyListenerAttributes";
      listenerArn: string;
      port: number;
      attributes: Record<string, string>;
    }
  | { kind: "deleteListener"; listenerArn: string; port: number };
