// A provider-neutral intent for unit tests, with everything defaulted.
import type { LoadBalancerIntent } from "../../../providers/provider.ts";

export function intent(over: Partial<LoadBalancerIntent> = {}): LoadBalancerIntent {
  return {
    service: { namespace: "shop", name: "web", uid: "uid-1" },
    loadBalancerClass: "portico.io/aws-nlb",
    annotations: {},
    ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: 30080 }],
    externalTrafficPolicy: "Cluster",
    allocateNodePorts: true,
    nodes: [
      { name: "n1", providerID: "aws:///us-east-1a/i-0000000000000000a" },
      { name: "n2", providerID: "aws:///us-east-1b/i-0000000000000000b" },
    ],
    endpoints: [{ ip: "10.0.1.5", ports: { http: 8080 } }],
    drainingEndpoints: [],
    sourceRanges: [],
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    serviceLabels: {},
    namespaceLabels: {},
    ...over,
  };
}

export const NETWORK = { vpcId: "vpc-1", subnets: ["subnet-b", "subnet-a"] };
