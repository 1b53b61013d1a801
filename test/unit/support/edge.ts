// Fixtures of the emulated cloud edge's unit tests: an ELBv2 target group of two pod targets, and an Azure rule.
import type { AzureEdgeRule } from "../../harness/cloudEdge/azurePlan.ts";
import type { EdgeTargetGroup } from "../../harness/cloudEdge/nlbModel.ts";

/** An ip target group with TCP checks every 10 s and two pods, 10.244.0.5 and 10.244.1.5, on port 8080. */
export const targetGroup = (over: Partial<EdgeTargetGroup> = {}): EdgeTargetGroup => ({
  arn: "arn:tg/a",
  protocol: "TCP",
  targetType: "ip",
  healthCheck: {
    protocol: "TCP",
    port: "traffic-port",
    intervalSeconds: 10,
    timeoutSeconds: 10,
    healthyThreshold: 3,
    unhealthyThreshold: 3,
  },
  targets: [
    { id: "10.244.0.5", ip: "10.244.0.5", port: 8080 },
    { id: "10.244.1.5", ip: "10.244.1.5", port: 8080 },
  ],
  ...over,
});

/** A TCP rule from 198.18.0.1:80 to the node port 30001, with ARM's defaults. */
export const azureRule = (over: Partial<AzureEdgeRule> = {}): AzureEdgeRule => ({
  id: "rule-web",
  frontend: "198.18.0.1",
  protocol: "Tcp",
  frontendPort: 80,
  backendPort: 30001,
  floatingIP: false,
  idleTimeoutMinutes: 4,
  tcpReset: true,
  sourceAffinity: false,
  group: "pool|probe|30001",
  ...over,
});
