// The writes a plan makes to security groups: the Service's own group and its inbound rules, and the per-Service
// rules on the targets' groups that an NLB without groups needs. (The cluster's shared backend group is written by
// sharedBackend.ts, which every Service's pass shares.)
import type { BackendRule, DesiredSecurityGroup, IngressRule, ObservedBackendRule } from "../model.ts";

export type SecurityGroupOperation =
  | { kind: "createSecurityGroup"; group: DesiredSecurityGroup }
  | { kind: "authorizeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "revokeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "authorizeBackendRules"; groupId: string; rules: BackendRule[] }
  | { kind: "revokeBackendRules"; groupId: string; rules: ObservedBackendRule[] }
  | { kind: "deleteSecurityGroup"; groupId: string; name: string };
