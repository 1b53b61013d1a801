import { inject } from "vitest";
import { trustCertificateAuthority } from "../emulators/azure/index.ts";

// Runs in every integration worker before its test files. Each worker owns one AWS emulator (reset
// between tests), and the AWS SDK, in tests and in the controller alike, finds it through the standard
// variables, exactly as it would find LocalStack or real AWS.
const endpoints = inject("awsEndpoints");
const workerId = Number(process.env.VITEST_POOL_ID ?? "1");
const endpoint = endpoints[(workerId - 1) % endpoints.length]!;
process.env.AWS_ENDPOINT_URL = endpoint.url;
process.env.PORTICO_AWS_EMULATOR = endpoint.kind;
process.env.AWS_REGION ??= "us-east-1";
process.env.AWS_ACCESS_KEY_ID ??= "test";
process.env.AWS_SECRET_ACCESS_KEY ??= "test";
process.env.KUBECONFIG = inject("kubeconfig");

// And one Azure emulator: this process trusts its CA (the controller under test runs in it too), and
// DefaultAzureCredential and the ARM clients find it through the standard AZURE_* variables.
const azureEndpoints = inject("azureEndpoints");
const azure = azureEndpoints[(workerId - 1) % Math.max(1, azureEndpoints.length)];
if (azure) {
  trustCertificateAuthority(azure.caCertPath);
  Object.assign(process.env, azure.environment);
}
