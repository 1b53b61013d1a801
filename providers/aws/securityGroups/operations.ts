// The writes a plan makes to security groups: the Service's own group and its inbound rules, and the per-Service
// rules on the targets' groups that an NLB without groups needs, and the Service's part in the cluster's shared
// backend group (sharedBackend.ts plans it across Services and carries it out one change at a time).
import type { BackendRule, DesiredSecurityGroup, IngressRule, ObservedBackendRule } from "../model.ts";

export type SecurityGroupOperation =
  | { kind: "createSecurityGroup"; group: DesiredSecurityGroup }
  | { kind: "authorizeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "revokeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "authorizeBackendRules"; groupId: string; rules: BackendRule[] }
  | { kind: "revokeBackendRules"; groupId: string; rules: ObservedBackendRule[] }
  | { kind: "deleteSecurityGroup"; groupId: string; name: string }
  | {
      kind: "useSharedBackend";
      /** The VPCs whose shared rules change (the Service's, and the one it left). */
      vpcIds: string[];
      /** The Service's VPC, whose shared group its NLB joins; absent when it joins none. */
      vpcId?: string;
      /** What changes, in words, as planned. */
      changes: string[];
    };
