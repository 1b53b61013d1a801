// The controller's metrics show the AWS rate limiter's state: what each bucket has learned, what waits and how
// long calls have waited on it.
import { expect, test } from "vitest";
import { ControllerMetrics } from "../../controller/metrics.ts";
import { createAwsClients } from "../../providers/aws/clients.ts";
import { withPriority } from "../../providers/aws/rateLimiter.ts";

test("a throttled bucket's learned rate and the calls waiting on it are scraped", async () => {
  const { limiter } = createAwsClients({ region: "us-east-1", endpoint: "http://127.0.0.1:9" });
  const limit = { capacity: 1, refillPerSecond: 0.001 };
  await limiter!.acquire("elbv2:TestOnlyBucket", limit);
  limiter!.throttled("elbv2:TestOnlyBucket");
  void withPriority("background", () => limiter!.acquire("elbv2:TestOnlyBucket", limit));
  const text = await new ControllerMetrics().registry.metrics();
  // 70% of the rate allowed (95% of 0.001/s).
  expect(text).toContain('portico_cloud_rate_limit_per_second{bucket="elbv2:TestOnlyBucket"} 0.000665');
  expect(text).toMatch(/portico_cloud_rate_limit_waiting\{priority="background"\} [1-9]/);
  expect(text).toContain('portico_cloud_rate_limit_wait_seconds_total{priority="user"}');
  expect(text).toMatch(
    /portico_cloud_rate_limit_bucket_wait_seconds_total\{bucket="elbv2:TestOnlyBucket"\} 0/,
  );
});
