#!/usr/bin/env node
// porticoctl: look at Portico's work. `status`, `plan`, `doctor` and `migrate`, with kubectl's conventions. Users
// run it as one executable (build/porticoctl.ts), named porticoctl or kubectl-portico: kubectl runs the latter as
// its plugin `kubectl portico`, and the help then names the command so.
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
} from "@kubernetes/client-node";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { annotations, annotationsMarkdown } from "./annotations.ts";
import { runningControllers } from "./controllers.ts";
import { doctor } from "./doctor.ts";
import { migrate } from "./migrate.ts";
import { plan } from "./plan.ts";
import { Printer, type OutputFormat } from "./render.ts";
import type { FlagTable } from "../../providers/descriptor.ts";
import {
  DESCRIPTORS,
  descriptorNamed,
  providerChoices,
  PROVIDER_NAMES,
  type ProviderName,
} from "../../providers/registry.ts";
import { status } from "./status.ts";
import { version } from "./version.ts";

const COMMANDS: [string, string][] = [
  ["status [NAMESPACE/NAME | NAME]", "Portico Services, their address, cloud resources and target health"],
  ["plan -f service.yaml", "what Portico would create or change for a Service, without doing it"],
  ["doctor NAMESPACE/NAME | NAME", "why a Service has no address, or why traffic does not reach it"],
  [
    `annotations [${PROVIDER_NAMES.join("|")}]`,
    "every annotation key Portico reads or refuses (-o markdown too)",
  ],
  ["version", "porticoctl's version and the running controllers'"],
  [
    "migrate [-n NS]",
    "before moving over, what Portico will adopt, keep, recreate or refuse\n" +
      "for each Service it would serve (every namespace unless -n), and why;\nnothing is changed",
  ],
];

/** The help, naming the command as it was run: `porticoctl`, or `kubectl portico` as kubectl's plugin. */
export function usage(name = "porticoctl"): string {
  const column = 2 + name.length + 34;
  const commands = COMMANDS.map(
    ([command, what]) =>
      `  ${name} ${command}`.padEnd(column) + what.replaceAll("\n", "\n" + " ".repeat(column)),
  );
  return `porticoctl: look at Portico's load balancers

${commands.join("\n")}

  -n, --namespace NS        namespace (default: the kubeconfig's, or all for status)
  -A, --all-namespaces      status: every namespace
  -o, --output FORMAT       text (default), wide, json or yaml
  -f, --filename FILE       plan: the Service's manifest
      --kubeconfig FILE     kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster)
  status, plan and doctor read the cluster name, node selector and provider settings from what the leading
  controller publishes on its Lease; the flags below are needed only where that cannot be read, and win over it.
      --cluster-name NAME   cluster name used in ownership tags (env PORTICO_CLUSTER_NAME)
      --controller-namespace NS   where to look for the controller's Lease when Leases cannot be listed in
                            every namespace (default portico-system)
  migrate:
      --provider NAME       where no controller runs yet, the provider moved to: ${providerChoices()} (default ${PROVIDER_NAMES[0]})
      --default-load-balancer     as the controller's flag: unclassed Services are Portico's too
${DESCRIPTORS.flatMap((d) => (d.tool ? [`  ${d.name}:\n${d.tool.usage}`] : [])).join("\n")}

Exit codes: 0 all is well, 1 something is wrong (doctor found a problem, a Service is not ready, migrate would
refuse a Service), 2 usage.`;
}

export const USAGE = usage();

const OPTIONS = {
  namespace: { type: "string", short: "n" },
  "all-namespaces": { type: "boolean", short: "A" },
  output: { type: "string", short: "o" },
  filename: { type: "string", short: "f" },
  kubeconfig: { type: "string" },
  "cluster-name": { type: "string" },
  "controller-namespace": { type: "string" },
  provider: { type: "string" },
  "default-load-balancer": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The providers' own porticoctl flags (providers/<name>/descriptor.ts, `tool`). */
const PROVIDER_OPTIONS: FlagTable = Object.assign(
  {},
  ...DESCRIPTORS.map((d) => d.tool?.flags ?? {}),
) as FlagTable;

/** Every option the command line accepts, for the reference that lists them. */
export const OPTION_NAMES: readonly string[] = [...Object.keys(OPTIONS), ...Object.keys(PROVIDER_OPTIONS)];

export async function main(
  argv: string[],
  write: (s: string) => void = (s) => process.stdout.write(s),
  name = "porticoctl",
): Promise<number> {
  const help = usage(name);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...PROVIDER_OPTIONS, ...OPTIONS },
    });
  } catch (err) {
    write(`${(err as Error).message}\n\n${help}\n`);
    return 2;
  }
  const { positionals } = parsed;
  const values = parsed.values as typeof parsed.values & { [flag: string]: string | boolean | undefined };
  const [command, target] = positionals;
  if (values.help || !command) {
    write(help + "\n");
    return values.help ? 0 : 2;
  }
  if (command === "annotations") {
    if (target && !descriptorNamed(target)) {
      write(`annotations ${target}: use ${providerChoices()}\n`);
      return 2;
    }
    if (values.output === "markdown") {
      write(annotationsMarkdown());
      return 0;
    }
  }
  const format = (values.output ?? "text") as OutputFormat;
  if (!["text", "wide", "json", "yaml"].includes(format)) {
    write(`-o ${format}: use text, wide, json or yaml\n`);
    return 2;
  }
  if (command === "annotations") return annotations(new Printer(format, { write }), target);
  if (command === "version" && target) {
    write(`version takes no argument\n`);
    return 2;
  }
  // What the user gave each provider through its own flags, read as the provider reads it.
  const given: Record<string, unknown> = {};
  try {
    for (const d of DESCRIPTORS) {
      const read = d.tool?.read(values, process.env);
      if (read !== undefined) given[d.name] = read;
    }
  } catch (err) {
    write(`${(err as Error).message}\n`);
    return 2;
  }
  const access = { given };
  const kc = new KubeConfig();
  if (values.kubeconfig) kc.loadFromFile(values.kubeconfig);
  else kc.loadFromDefault();
  const printer = new Printer(format, { write });
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const clusterName = values["cluster-name"] ?? process.env.PORTICO_CLUSTER_NAME ?? "";
  const controllerNamespace = values["controller-namespace"] ?? "portico-system";
  const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  const ref = (t: string) => {
    const [ns, name] = t.includes("/")
      ? t.split("/", 2)
      : [values.namespace ?? contextNamespace ?? "default", t];
    return { namespace: ns!, name: name! };
  };
  switch (command) {
    case "status": {
      const one = target ? ref(target) : undefined;
      const namespace = one?.namespace ?? values.namespace;
      return status(core, printer, {
        ...(namespace ? { namespace } : {}),
        allNamespaces: values["all-namespaces"] ?? !namespace,
        ...(one ? { name: one.name } : {}),
        ...(clusterName ? { clusterName } : {}),
        access,
        controllers: await runningControllers(kc.makeApiClient(CoordinationV1Api), controllerNamespace),
      });
    }
    case "version":
      return version(
        printer,
        await runningControllers(kc.makeApiClient(CoordinationV1Api), controllerNamespace),
      );
    case "plan":
      if (!values.filename) {
        write("plan needs -f FILE (a Service manifest; - for standard input)\n");
        return 2;
      }
      return plan(kc, { core, discovery, coordination: kc.makeApiClient(CoordinationV1Api) }, printer, {
        file: values.filename,
        ...(values.namespace ? { namespace: values.namespace } : {}),
        ...(clusterName ? { clusterName } : {}),
        controllers: await runningControllers(kc.makeApiClient(CoordinationV1Api), controllerNamespace),
        access,
      });
    case "doctor":
      if (!target) {
        write("doctor needs a Service: porticoctl doctor NAMESPACE/NAME\n");
        return 2;
      }
      return doctor(
        {
          core,
          discovery,
          coordination: kc.makeApiClient(CoordinationV1Api),
          custom: kc.makeApiClient(CustomObjectsApi),
        },
        printer,
        ref(target),
        {
          ...(clusterName ? { clusterName } : {}),
          controllerNamespace,
          access,
        },
      );
    case "migrate": {
      const provider = values.provider ?? PROVIDER_NAMES[0]!;
      if (!descriptorNamed(provider)) {
        write(`--provider ${provider}: use ${providerChoices()}\n`);
        return 2;
      }
      const coordination = kc.makeApiClient(CoordinationV1Api);
      return migrate(kc, { core, discovery, coordination }, printer, {
        ...(values.namespace ? { namespace: values.namespace } : {}),
        ...(clusterName ? { clusterName } : {}),
        provider: provider as ProviderName,
        defaultForUnclassed: values["default-load-balancer"] ?? false,
        controllers: await runningControllers(coordination, controllerNamespace),
        access,
      });
    }
    default:
      write(`unknown command ${command}\n\n${help}\n`);
      return 2;
  }
}

/**
 * Runs the command line and exits with its code. Output to a pipe closed early (`| head`) ends the command
 * quietly, as kubectl's does.
 */
export function run(argv: string[]): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
  // Run as kubectl's plugin (the executable named kubectl-portico), the help says `kubectl portico`.
  const name = basename(process.argv0) === "kubectl-portico" ? "kubectl portico" : "porticoctl";
  main(argv, undefined, name).then(
    (code) => process.exit(code),
    (err: unknown) => {
      const body = (err as { body?: unknown }).body;
      process.stderr.write(
        `porticoctl: ${(err as Error).message}${body ? `: ${typeof body === "string" ? body : JSON.stringify(body)}` : ""}\n`,
      );
      process.exit(1);
    },
  );
}

if (import.meta.main) run(process.argv.slice(2));
