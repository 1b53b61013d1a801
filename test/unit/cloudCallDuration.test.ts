// The AWS clients tell observers how long the cloud took to answer each call, apart from the rate limiter's wait:
// the controller's portico_cloud_call_duration_seconds comes from it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { DescribeLoadBalancersCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ControllerMetrics } from "../../controller/metrics.ts";
import { createAwsClients } from "../../providers/aws/clients.ts";

const ANSWER_DELAY_MS = 120;
const server = createServer((_req, res) => {
  void sleep(ANSWER_DELAY_MS).then(() => {
    res.writeHead(200, { "content-type": "text/xml" });
    res.end(
      '<DescribeLoadBalancersResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/">' +
        "<DescribeLoadBalancersResult><LoadBalancers/></DescribeLoadBalancersResult>" +
        "<ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></DescribeLoadBalancersResponse>",
    );
  });
});
let endpoint = "";
const savedEnv = { ...process.env };
beforeAll(async () => {
  // The SDK signs with credentials from the environment; any will do for this server.
  process.env.AWS_ACCESS_KEY_ID = "AKIDTEST";
  process.env.AWS_SECRET_ACCESS_KEY = "secret";
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  process.env = savedEnv;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test("each call's answer time reaches the observers and the controller's histogram", async () => {
  const clients = createAwsClients({
    region: "us-east-1",
    endpoint,
    rateLimit: false,
  });
  const seen: { operation: string; outcome: string; seconds: number }[] = [];
  const metrics = new ControllerMetrics();
  clients.onCall((_service, operation, outcome, _code, seconds) => {
    seen.push({ operation, outcome, seconds });
    metrics.cloudCallDuration.observe({ operation }, seconds);
  });
  await clients.elbv2.send(new DescribeLoadBalancersCommand({}));
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ operation: "elbv2:DescribeLoadBalancers", outcome: "ok" });
  expect(seen[0]!.seconds).toBeGreaterThanOrEqual((ANSWER_DELAY_MS - 5) / 1000);
  const text = await metrics.registry.metrics();
  expect(text).toContain(
    'portico_cloud_call_duration_seconds_count{operation="elbv2:DescribeLoadBalancers"} 1',
  );
  expect(text).toMatch(
    /portico_cloud_call_duration_seconds_bucket\{le="0.1",operation="elbv2:DescribeLoadBalancers"\} 0/,
  );
});
