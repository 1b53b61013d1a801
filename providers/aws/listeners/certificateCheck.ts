// TLS certificates named by annotation are checked before anything is made: a certificate that does not exist
// or is not issued would otherwise fail only at CreateListener, after the NLB and target groups exist.
import type { ACMClient } from "@aws-sdk/client-acm";
import { DescribeCertificateCommand } from "@aws-sdk/client-acm";
import { CloudError, ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import { call } from "../clients.ts";

const CACHE_MS = 60_000;

export class CertificateChecker {
  private readonly acm: ACMClient;
  private readonly checked = new Map<string, number>();

  constructor(acm: ACMClient) {
    this.acm = acm;
  }

  async check(arns: string[]): Promise<void> {
    for (const arn of arns) {
      // IAM server certificates (arn:aws:iam::…:server-certificate/…) have no status to look at.
      if (!arn.includes(":acm:")) continue;
      const at = this.checked.get(arn);
      if (at && Date.now() - at < CACHE_MS) continue;
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
      this.checked.set(arn, Date.now());
    }
  }
}
