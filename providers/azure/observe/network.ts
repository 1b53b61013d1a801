// The cluster's virtual network: its address space (which node and pod addresses a backend pool may hold) and its
// subnets (where internal frontends go). It changes rarely, so it is read once and kept for a few minutes; a
// subnet that is asked for and not known sends it to be read again at once.
import { CloudError } from "../../errors.ts";
import { call, isNotFound, type AzureClients } from "../arm/clients.ts";
import type { Network } from "../model.ts";

const TTL_MS = 5 * 60_000;

export class NetworkCache {
  private readonly clients: AzureClients;
  private readonly resourceGroup: string;
  private readonly vnetName: string;
  private cached: { network: Network; at: number } | undefined;
  private loading: Promise<Network> | undefined;

  constructor(clients: AzureClients, resourceGroup: string, vnetName: string) {
    this.clients = clients;
    this.resourceGroup = resourceGroup;
    this.vnetName = vnetName;
  }

  /** The network, read again when older than a few minutes or when it lacks `subnet`. */
  async get(subnet?: string): Promise<Network> {
    const c = this.cached;
    const fresh = c && Date.now() - c.at < TTL_MS;
    if (fresh && (!subnet || c.network.subnets[subnet.toLowerCase()])) return c.network;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<Network> {
    let vnet;
    try {
      vnet = await call("virtualNetworks:get", () =>
        this.clients.network.virtualNetworks.get(this.resourceGroup, this.vnetName),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new CloudError({
        operation: "virtualNetworks:get",
        code: "VirtualNetworkNotFound",
        message: `virtual network ${this.vnetName} is not in resource group ${this.resourceGroup}; fix vnetName/vnetResourceGroup in the controller's Azure config`,
        retryable: false,
      });
    }
    const network: Network = {
      vnetId: vnet.id!,
      addressPrefixes: vnet.addressSpace?.addressPrefixes ?? [],
      subnets: Object.fromEntries(
        (vnet.subnets ?? []).map((s) => [
          (s.name ?? "").toLowerCase(),
          {
            id: s.id!,
            addressPrefixes: s.addressPrefixes?.length
              ? s.addressPrefixes
              : s.addressPrefix
                ? [s.addressPrefix]
                : [],
          },
        ]),
      ),
    };
    this.cached = { network, at: Date.now() };
    return network;
  }
}
