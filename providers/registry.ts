// Every provider Portico has: the one place that knows them all. Adding a provider is its folder and one line
// below. The controller and porticoctl find providers, their flags, settings, help, published settings, watches
// and porticoctl planners only through here and the interfaces (provider.ts, descriptor.ts); a provider's code,
// and its cloud's SDK, is loaded only when it is started.
import { AnnotationCatalog, assembleFamilies } from "./annotationKeys/review.ts";
import { AWS } from "./aws/descriptor.ts";
import { AZURE } from "./azure/descriptor.ts";
import type { CloudAccess, PlannerContext, ProviderDescriptor } from "./descriptor.ts";
import { METAL } from "./metal/descriptor.ts";
import type { LoadBalancerProvider } from "./provider.ts";

export const PROVIDERS = { aws: AWS, azure: AZURE, metal: METAL } as const;

export type ProviderName = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** Every descriptor, as the programs use them: without knowing any one's settings. */
export const DESCRIPTORS: readonly ProviderDescriptor<unknown>[] = Object.values(PROVIDERS).map(
  (d) => d as unknown as ProviderDescriptor<unknown>,
);

/** Every annotation key the providers read or refuse, family by family, with the providers that read each. */
export const ANNOTATIONS = new AnnotationCatalog(assembleFamilies(DESCRIPTORS));

/** The descriptor of a provider by its name, or undefined for a name no provider has. */
export function descriptorNamed(name: string | undefined): ProviderDescriptor<unknown> | undefined {
  return DESCRIPTORS.find((d) => d.name === name);
}

/** The provider whose own class this is. */
export function providerOfOwnClass(cls: string | undefined): ProviderDescriptor<unknown> | undefined {
  return DESCRIPTORS.find((d) => cls !== undefined && d.loadBalancerClass === cls);
}

/** "aws, azure or metal": the names for a message that lists them. */
export function providerChoices(word = "or"): string {
  return PROVIDER_NAMES.length > 1
    ? `${PROVIDER_NAMES.slice(0, -1).join(", ")} ${word} ${PROVIDER_NAMES.at(-1)}`
    : PROVIDER_NAMES.join("");
}

/** What porticoctl knows of every provider's cloud: what the user gave, and what the serving controller published. */
export interface ToolAccess {
  /** Each provider's `tool.read` result, by provider name. */
  readonly given?: Readonly<Record<string, unknown>>;
  /** The serving controller's provider and what it published of its settings. */
  readonly published?: { readonly provider: string; readonly settings?: unknown };
}

/** The provider whose inspector reads Services of this class. */
function inspectorOf(cls: string | undefined) {
  return DESCRIPTORS.find((p) => cls !== undefined && p.inspects.includes(cls));
}

/** One provider's part of what porticoctl knows. */
export function accessOf(descriptor: ProviderDescriptor<unknown>, tool: ToolAccess = {}): CloudAccess {
  const given = tool.given?.[descriptor.name];
  const published = tool.published?.provider === descriptor.name ? tool.published.settings : undefined;
  return { ...(given !== undefined ? { given } : {}), ...(published !== undefined ? { published } : {}) };
}

/**
 * A provider for looking at the cloud of a class; porticoctl only ever reads through it (inspect, plan).
 * Undefined for a class no cloud serves, or when the provider needs more than it was given (`inspectionHint`).
 */
export async function inspectorFor(
  cls: string | undefined,
  clusterName: string,
  tool: ToolAccess = {},
): Promise<LoadBalancerProvider | undefined> {
  const descriptor = inspectorOf(cls);
  return descriptor?.inspector?.(clusterName, accessOf(descriptor, tool));
}

/** How to get a class's cloud detail when porticoctl cannot read its cloud without being told more. */
export function inspectionHint(cls: string | undefined, tool: ToolAccess = {}): string | undefined {
  const descriptor = inspectorOf(cls);
  return descriptor?.inspectionHint?.(accessOf(descriptor, tool));
}

/** A provider that plans without writing, for porticoctl plan and migrate: its planner, else its inspector. */
export async function plannerFor(
  descriptor: ProviderDescriptor<unknown>,
  context: PlannerContext,
): Promise<LoadBalancerProvider | undefined> {
  return descriptor.planner
    ? descriptor.planner(context)
    : descriptor.inspector?.(context.clusterName, context.access);
}

/**
 * The provider that serves Services of a class: the one whose own class it is, else one that takes the class
 * over (its inspector reads it: the AWS Load Balancer Controller's class for AWS).
 */
export function providerForClass(cls: string | undefined): ProviderDescriptor<unknown> | undefined {
  return providerOfOwnClass(cls) ?? inspectorOf(cls);
}
