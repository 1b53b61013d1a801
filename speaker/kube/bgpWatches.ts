// The BGP mode's configuration objects: Portico's BGPPeers, BGPAdvertisements and BFDProfiles (portico.io,
// cluster-scoped) and MetalLB's (metallb.io: BGPPeer v1beta2, the others v1beta1, in MetalLB's namespace) when
// it is read. Watched only when the speaker runs in BGP mode, so an L2-only cluster needs neither the CRDs nor
// the RBAC. A missing CRD means none of its objects, as for the pools.
import type { KubernetesObject } from "@kubernetes/client-node";
import type { KubeApi } from "./api/client.ts";
import type { ConfigObject } from "../configObjects.ts";
import { trimL2Status } from "../../shared/l2status.ts";
import { CustomWatch } from "./customWatch.ts";

type Objects = CustomWatch<ConfigObject & KubernetesObject>;

export interface BgpObjects {
  /** The ServiceBGPStatus records (of the speaker's namespace, or all). */
  readonly records: readonly (KubernetesObject & { status?: unknown })[];
  readonly peers: readonly ConfigObject[];
  readonly ads: readonly ConfigObject[];
  readonly bfdProfiles: readonly ConfigObject[];
  readonly metallbPeers: readonly ConfigObject[];
  readonly metallbAds: readonly ConfigObject[];
  readonly metallbBfdProfiles: readonly ConfigObject[];
}

export interface MetallbRead {
  readonly namespace: string;
  readonly missingRetryMs: number;
  readonly quietWhenMissing: boolean;
}

export class BgpWatches {
  private readonly porticoWatches: [Objects, Objects, Objects];
  private readonly metallbWatches: [Objects, Objects, Objects] | undefined;
  private readonly recordWatch: CustomWatch<KubernetesObject & { status?: unknown }>;

  constructor(
    api: KubeApi,
    retryMs: number,
    metallb: MetallbRead | undefined,
    namespace: string | undefined,
  ) {
    this.recordWatch = new CustomWatch(
      api,
      {
        group: "portico.io",
        version: "v1alpha1",
        plural: "servicebgpstatuses",
        ...(namespace ? { namespace } : {}),
        missingRetryMs: retryMs,
        quietWhenMissing: false,
        whenMissing:
          "the ServiceBGPStatus CRD is not installed; advertising without recording where (apply manifests/base/crds)",
      },
      // One per Service and node: of each, only what the records are compared by.
      trimL2Status,
    );
    const portico = (plural: string, kind: string) =>
      new CustomWatch<ConfigObject & KubernetesObject>(api, {
        group: "portico.io",
        version: "v1alpha1",
        plural,
        missingRetryMs: retryMs,
        quietWhenMissing: false,
        whenMissing: `the ${kind} CRD (portico.io) is not installed; apply manifests/base/crds to use the BGP mode`,
      });
    this.porticoWatches = [
      portico("bgppeers", "BGPPeer"),
      portico("bgpadvertisements", "BGPAdvertisement"),
      portico("bfdprofiles", "BFDProfile"),
    ];
    if (metallb) {
      const theirs = (plural: string, version: string, kind: string) =>
        new CustomWatch<ConfigObject & KubernetesObject>(api, {
          group: "metallb.io",
          version,
          plural,
          ...metallb,
          whenMissing: `MetalLB's ${kind} CRD (metallb.io/${version}) is not installed; reading Portico's only`,
        });
      this.metallbWatches = [
        theirs("bgppeers", "v1beta2", "BGPPeer"),
        theirs("bgpadvertisements", "v1beta1", "BGPAdvertisement"),
        theirs("bfdprofiles", "v1beta1", "BFDProfile"),
      ];
    }
  }

  all(): CustomWatch<KubernetesObject>[] {
    return [...this.porticoWatches, ...(this.metallbWatches ?? []), this.recordWatch];
  }

  isRecordWatch(watch: CustomWatch<KubernetesObject>): boolean {
    return watch === (this.recordWatch as CustomWatch<KubernetesObject>);
  }

  /** Whether records can be written (their CRD is installed and listed). */
  recordsInstalled(): boolean {
    return this.recordWatch.listed() && !this.recordWatch.missing();
  }

  objects(): BgpObjects {
    const [peers, ads, bfd] = this.porticoWatches;
    const [mPeers, mAds, mBfd] = this.metallbWatches ?? [];
    return {
      records: this.recordWatch.list(),
      peers: peers.list(),
      ads: ads.list(),
      bfdProfiles: bfd.list(),
      metallbPeers: mPeers?.list() ?? [],
      metallbAds: mAds?.list() ?? [],
      metallbBfdProfiles: mBfd?.list() ?? [],
    };
  }
}
