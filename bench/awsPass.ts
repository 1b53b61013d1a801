// What one AWS pass walks through: the functions of providers/ that a pass runs, and the files they live in, read
// from V8's precise coverage (call counts) around the pass, against moto with the real SDK clients. Three passes
// of one Service: its creation, a no-change resync (background) and an endpoint change (a user's pass). A
// "step" is a function the pass ran at least once, named or not (callbacks count: they are code a reader follows).
import { randomUUID } from "node:crypto";
import { Session } from "node:inspector/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { TestAws } from "../test/harness/aws.ts";
import { startMoto } from "../test/harness/awsEmulator.ts";
import { ensureTools } from "../test/harness/tools.ts";
import { intent } from "../test/unit/support/awsIntent.ts";
import { AwsProvider } from "../providers/aws/provider.ts";
import { createAwsClients } from "../providers/aws/clients.ts";
import { report } from "./report.ts";

// The emulator's account, as the tests' workers set it.
process.env.AWS_REGION ??= "us-east-1";
process.env.AWS_ACCESS_KEY_ID ??= "bench";
process.env.AWS_SECRET_ACCESS_KEY ??= "bench";

const ROOT = join(import.meta.dirname, "..");
const PROVIDERS = join(ROOT, "providers");

interface Walk {
  steps: number;
  namedSteps: number;
  files: number;
  byFolder: Record<string, { steps: number; files: number }>;
  calls: number;
}

/** The functions under providers/ that ran since the last reading (V8 resets the counts at each reading). */
async function walked(session: Session): Promise<Walk> {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const steps: { file: string; name: string }[] = [];
  let calls = 0;
  for (const script of result) {
    if (!script.url.startsWith("file:")) continue;
    const file = fileURLToPath(script.url);
    if (!file.startsWith(PROVIDERS + "/")) continue;
    // The first entry is the module's own top level, run once at import: not a step of a pass.
    for (const fn of script.functions.slice(1)) {
      const count = fn.ranges[0]?.count ?? 0;
      if (count === 0) continue;
      steps.push({ file: relative(ROOT, file), name: fn.functionName });
      calls += count;
    }
  }
  const files = new Set(steps.map((s) => s.file));
  const byFolder: Walk["byFolder"] = {};
  for (const file of files) {
    const folder = file.split("/").slice(0, -1).join("/");
    const f = (byFolder[folder] ??= { steps: 0, files: 0 });
    f.files++;
    f.steps += steps.filter((s) => s.file === file).length;
  }
  return {
    steps: steps.length,
    namedSteps: steps.filter((s) => s.name).length,
    files: files.size,
    byFolder: Object.fromEntries(Object.entries(byFolder).sort(([a], [b]) => a.localeCompare(b))),
    calls,
  };
}

export async function benchAwsPass(): Promise<Record<string, unknown>> {
  const tools = await ensureTools("all");
  const dir = await mkdtemp(join(tmpdir(), "portico-aws-pass-"));
  const moto = await startMoto(tools.motoServer!, dir, 1);
  const session = new Session();
  session.connect();
  try {
    const aws = await TestAws.fresh(moto.endpoint.url);
    const cluster = "pass";
    const network = await aws.createNetwork(cluster, { internal: true });
    const instances = await aws.createInstances(network.subnets[0]!.subnetId, 2);
    const provider = new AwsProvider({
      clusterName: cluster,
      clients: createAwsClients({ endpoint: moto.endpoint.url, rateLimit: false }),
    });
    const nodes = instances.map((inst, i) => ({ name: `node-${i}`, providerID: inst.providerID }));
    // A warm provider: another Service made first, so the cluster's shared reads are cached as in a running one.
    await provider.ensure(intent({ service: { namespace: "shop", name: "warm", uid: randomUUID() }, nodes }));
    // ip targets, so that an endpoint change is a change of targets.
    const web = intent({
      service: { namespace: "shop", name: "web", uid: randomUUID() },
      annotations: { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
      nodes,
    });
    await session.post("Profiler.enable");
    await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    await session.post("Profiler.takePreciseCoverage");
    await provider.ensure(web);
    const creation = await walked(session);
    await provider.ensure(web, { background: true });
    const resync = await walked(session);
    await provider.ensure({ ...web, endpoints: [{ ip: "10.0.0.20", ports: { http: 8080 } }] });
    const endpointChange = await walked(session);
    await session.post("Profiler.stopPreciseCoverage");
    return { creation, resync, endpointChange };
  } finally {
    session.disconnect();
    await moto.process.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await report("aws-pass", benchAwsPass);
