// TLS certificates named by annotation are checked before anything is made: a certificate that does not exist
// or is not issued would otherwise fail only at CreateListener, after the NLB and target groups exist. A
// certificate found issued is remembered for a minute in the cluster's reads (../state/clusterReads.ts), since
// every pass of a Service names it again; one that is not is checked again by the next pass, which a fix (the
// certificate imported or validated) is waiting for.
import type { ACMClient } from "@aws-sdk/client-acm";
import { DescribeCertificateCommand } from "@aws-sdk/client-acm";
import { CloudError, ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import { call } from "../clients.ts";
import type { AgedReads } from "../state/agedReads.ts";

export class CertificateChecker {
  private readonly acm: ACMClient;
  /** A read that resolves when the certificate is issued, and fails (and so is not kept) when it is not. */
  private readonly issued: AgedReads<void>;

  constructor(acm: ACMClient, issued: AgedReads<void>) {
    this.acm = acm;
    this.issued = issued;
  }

  async check(arns: string[]): Promise<void> {
    for (const arn of arns) {
      // IAM server certificates (arn:aws:iam::…:server-certificate/…) have no status to look at.
      if (!arn.includes(":acm:")) continue;
      await this.issued.get(arn, () => this.checkOne(arn));
    }
  }

  private async checkOne(arn: string): Promise<void> {
    const status = await call("acm:DescribeCertificate", () =>
      this.acm.send(new DescribeCertificateCommand({ CertificateArn: arn })),
    ).then(
      (out) => out.Certificate?.Status ?? "UNKNOWN",
      (err: unknown) => {
        if (err instanceof CloudError && /NotFound/.test(err.code)) return "NOT_FOUND";
        throw err;
      },
    );
    if (status !== "ISSUED") {
      throw new ConfigurationError(
        "CertificateNotUsable",
        `metadata.annotations[${AWS_ANNOTATIONS.sslCert}]`,
        status === "NOT_FOUND"
          ? `certificate ${arn} does not exist`
          : `certificate ${arn} is ${status}, not ISSUED`,
        "name an issued ACM certificate in this account and region",
      );
    }
  }
}
