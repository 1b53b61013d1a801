import { defineConfig } from "vitest/config";
import { TEST_WORKERS } from "./test/harness/workers.ts";

// Two projects: `unit` is pure logic (no processes, milliseconds); `integration` runs against the real
// kube-apiserver and the AWS emulator that the global setup starts once per run.
export default defineConfig({
  test: {
    maxWorkers: TEST_WORKERS,
    pool: "forks",
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "controller/**/*.test.ts",
            "providers/**/*.test.ts",
            "speaker/**/*.test.ts",
            "shared/**/*.test.ts",
            "test/unit/**/*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "integration",
          include: [
            "test/smoke/**/*.test.ts",
            "test/integration/**/*.test.ts",
            "test/emulators/**/*.test.ts",
            // Fault tests run small here; `make test-chaos` runs them at size.
            "test/chaos/**/*.test.ts",
          ],
          globalSetup: ["test/harness/globalSetup.ts"],
          setupFiles: ["test/harness/workerSetup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Portico as users run it: its image on a local cluster of real kubelets, containerd and
        // kube-proxy, with traffic from a client on the LAN. One cluster per run, so one file at a time.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/harness/e2eSetup.ts"],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
