// The series each alerting rule is tested on (alerts.test.ts). Values use promtool's notation: "a+bxn" is a,
// a+b, ... n more steps; "vxn" repeats v; one step a minute. Controllers are instances c1 (leading) and c2 (a
// standby, whose view the rules must ignore); speakers are n1, n2.

export interface AlertCase {
  readonly name: string;
  readonly alert: string;
  readonly series: Readonly<Record<string, string>>;
  /** When it fires, with the alert's labels beside severity, and $value as promtool renders it. */
  readonly fires?: readonly { at: string; labels: Record<string, string>; value?: string }[];
  /** When it must not fire. */
  readonly quiet: readonly string[];
}

const leader = { 'portico_leader{instance="c1"}': "1x40", 'portico_leader{instance="c2"}': "0x40" };
const lan = (family: string, assigned: string, available: string, instance = "c1") => ({
  [`portico_pool_addresses{instance="${instance}",pool="lan",family="${family}",state="assigned"}`]: assigned,
  [`portico_pool_addresses{instance="${instance}",pool="lan",family="${family}",state="available"}`]:
    available,
});

export const ALERT_CASES: readonly AlertCase[] = [
  {
    name: "Services not serving for 10 minutes, counted by the leader, not the standby",
    alert: "PorticoServiceNotServing",
    series: {
      ...leader,
      'portico_services{instance="c1",condition="Serving",status="False"}': "2x20",
      'portico_services{instance="c2",condition="Serving",status="False"}': "5x20",
    },
    fires: [{ at: "11m", labels: {}, value: "2" }],
    quiet: ["9m"],
  },
  {
    name: "a standby's stale count of Services not serving raises nothing",
    alert: "PorticoServiceNotServing",
    series: {
      ...leader,
      'portico_services{instance="c1",condition="Serving",status="False"}': "0x20",
      'portico_services{instance="c1",condition="Serving",status="True"}': "3x20",
      'portico_services{instance="c2",condition="Serving",status="False"}': "3x20",
    },
    quiet: ["15m"],
  },
  {
    name: "a load balancer not made as asked for 15 minutes",
    alert: "PorticoLoadBalancerNotReady",
    series: {
      ...leader,
      'portico_services{instance="c1",condition="LoadBalancerReady",status="False"}': "1x20",
    },
    fires: [{ at: "16m", labels: {}, value: "1" }],
    quiet: ["14m"],
  },
  {
    name: "Services not serving do not say their load balancer is not ready",
    alert: "PorticoLoadBalancerNotReady",
    series: {
      ...leader,
      'portico_services{instance="c1",condition="LoadBalancerReady",status="True"}': "4x20",
      'portico_services{instance="c1",condition="LoadBalancerReady",status="False"}': "0x20",
      'portico_services{instance="c1",condition="Serving",status="False"}': "4x20",
    },
    quiet: ["18m"],
  },
  {
    name: "a pool's IPv4 addresses 95% assigned; its empty IPv6 family says nothing",
    alert: "PorticoPoolNearlyExhausted",
    series: { ...leader, ...lan("IPv4", "95x10", "5x10"), ...lan("IPv6", "0x10", "0x10") },
    fires: [{ at: "6m", labels: { pool: "lan", family: "IPv4" } }],
    quiet: ["4m"],
  },
  {
    name: "half a pool free, though a standby counts none free",
    alert: "PorticoPoolNearlyExhausted",
    series: { ...leader, ...lan("IPv4", "50x10", "50x10"), ...lan("IPv4", "100x10", "0x10", "c2") },
    quiet: ["8m"],
  },
  {
    name: "every address of a pool assigned",
    alert: "PorticoPoolExhausted",
    series: { ...leader, ...lan("IPv4", "8x10", "0x10") },
    fires: [{ at: "2m", labels: { pool: "lan", family: "IPv4" } }],
    quiet: [],
  },
  {
    name: "a family without addresses is not exhausted, nor a pool a standby counts full",
    alert: "PorticoPoolExhausted",
    series: {
      ...leader,
      ...lan("IPv6", "0x10", "0x10"),
      ...lan("IPv4", "2x10", "6x10"),
      ...lan("IPv4", "8x10", "0x10", "c2"),
    },
    quiet: ["5m"],
  },
  {
    name: "addresses no node may announce for 10 minutes",
    alert: "PorticoAddressNotAnnounced",
    series: {
      'portico_speaker_addresses_without_matching_node{instance="n1",pool="edge",reason="noMatchingNode"}':
        "2x20",
      'portico_speaker_addresses_without_matching_node{instance="n2",pool="edge",reason="noMatchingNode"}':
        "2x20",
    },
    fires: [{ at: "11m", labels: { pool: "edge", reason: "noMatchingNode" }, value: "2" }],
    quiet: ["9m"],
  },
  {
    name: "every address announced",
    alert: "PorticoAddressNotAnnounced",
    series: {
      'portico_speaker_addresses_without_matching_node{instance="n1",pool="edge",reason="noMatchingNode"}':
        "0x20",
    },
    quiet: ["15m"],
  },
  {
    name: "a probe answered by another host",
    alert: "PorticoAddressInUse",
    series: {
      'portico_speaker_address_probes_total{instance="n1",outcome="free"}': "0+1x20",
      'portico_speaker_address_probes_total{instance="n1",outcome="inUse"}': "0 0 0 1x17",
    },
    fires: [{ at: "5m", labels: {} }],
    quiet: ["2m"],
  },
  {
    name: "probes that found addresses free, and a conflict older than 15 minutes",
    alert: "PorticoAddressInUse",
    series: {
      'portico_speaker_address_probes_total{instance="n1",outcome="free"}': "0+1x40",
      'portico_speaker_address_probes_total{instance="n2",outcome="inUse"}': "3x40",
    },
    quiet: ["20m", "35m"],
  },
  {
    name: "a BGP session down for 5 minutes",
    alert: "PorticoBGPSessionDown",
    series: { 'portico_speaker_bgp_session_up{instance="n1:7472",peer="192.0.2.1"}': "1 1 0x10" },
    fires: [{ at: "8m", labels: { instance: "n1:7472", peer: "192.0.2.1" } }],
    quiet: ["5m"],
  },
  {
    name: "a BGP session that came back after 2 minutes",
    alert: "PorticoBGPSessionDown",
    series: { 'portico_speaker_bgp_session_up{instance="n1:7472",peer="192.0.2.1"}': "1 0 0 1x10" },
    quiet: ["8m", "10m"],
  },
  {
    name: "a speaker not scraped for 5 minutes",
    alert: "PorticoSpeakerDown",
    series: {
      'up{job="portico-system/portico-speaker",portico_component="speaker",instance="n1:7472"}': "1 1 0x10",
      'up{job="portico-system/portico-speaker",portico_component="speaker",instance="n2:7472"}': "1x12",
    },
    fires: [
      {
        at: "8m",
        labels: { job: "portico-system/portico-speaker", portico_component: "speaker", instance: "n1:7472" },
      },
    ],
    quiet: ["5m"],
  },
  {
    name: "a speaker of a release named otherwise (fullnameOverride) is still a speaker",
    alert: "PorticoSpeakerDown",
    series: {
      'up{job="lb/edge-speaker",portico_component="speaker",instance="n1:7472"}': "0x12",
    },
    fires: [
      { at: "6m", labels: { job: "lb/edge-speaker", portico_component: "speaker", instance: "n1:7472" } },
    ],
    quiet: ["4m"],
  },
  {
    name: "another job down is not a speaker down",
    alert: "PorticoSpeakerDown",
    series: {
      'up{job="portico-system/portico-controller",portico_component="controller",instance="c1:8080"}': "0x12",
      'up{job="portico-system/portico-speaker",portico_component="speaker",instance="n1:7472"}': "1x12",
    },
    quiet: ["10m"],
  },
  {
    name: "no replica leading for 5 minutes",
    alert: "PorticoControllerNoLeader",
    series: { 'portico_leader{instance="c1"}': "1 1 0x10", 'portico_leader{instance="c2"}': "0x12" },
    fires: [{ at: "8m", labels: {} }],
    quiet: ["5m"],
  },
  {
    name: "leadership handed over to the other replica",
    alert: "PorticoControllerNoLeader",
    series: { 'portico_leader{instance="c1"}': "1 1 0x10", 'portico_leader{instance="c2"}': "0 0 0 1x9" },
    quiet: ["10m"],
  },
  {
    name: "six throttled calls a minute for 15 minutes",
    alert: "PorticoCloudThrottling",
    // A new counter's rate over 10 minutes reaches 6 a minute only once 10 minutes have passed.
    series: { 'portico_cloud_throttles_total{operation="elbv2:RegisterTargets"}': "0+6x40" },
    fires: [{ at: "26m", labels: {} }],
    quiet: ["10m"],
  },
  {
    name: "one throttled call a minute",
    alert: "PorticoCloudThrottling",
    series: { 'portico_cloud_throttles_total{operation="elbv2:RegisterTargets"}': "0+1x40" },
    quiet: ["30m"],
  },
  {
    name: "a fifth of the reconciles failing on cloud errors",
    alert: "PorticoReconcileErrors",
    series: {
      'portico_reconciles_total{outcome="cloud_error"}': "0+2x40",
      'portico_reconciles_total{outcome="unchanged"}': "0+8x40",
    },
    fires: [{ at: "30m", labels: {} }],
    quiet: ["10m"],
  },
  {
    name: "Services refused for their settings are not cloud errors",
    alert: "PorticoReconcileErrors",
    series: {
      'portico_reconciles_total{outcome="cloud_error"}': "0x40",
      'portico_reconciles_total{outcome="invalid"}': "0+5x40",
      'portico_reconciles_total{outcome="unchanged"}': "0+5x40",
    },
    quiet: ["30m"],
  },
];
