import { ACMClient, DescribeCertificateCommand } from "@aws-sdk/client-acm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withPriority } from "../../priority.ts";
import { CLUSTER_CACHE_MS } from "../state/cacheAge.ts";
import { ClusterReads } from "../state/clusterReads.ts";
import { CertificateChecker } from "./certificateCheck.ts";

const ISSUED = "arn:aws:acm:us-east-1:111122223333:certificate/issued";
const PENDING = "arn:aws:acm:us-east-1:111122223333:certificate/pending";
const IAM = "arn:aws:iam::111122223333:server-certificate/legacy";

function fakeAcm() {
  const acm = new ACMClient({ region: "us-east-1", credentials: { accessKeyId: "a", secretAccessKey: "b" } });
  const asked: string[] = [];
  const send = vi.fn((command: unknown) => {
    const arn = (command as DescribeCertificateCommand).input.CertificateArn!;
    asked.push(arn);
    return Promise.resolve({ Certificate: { Status: arn === ISSUED ? "ISSUED" : "PENDING_VALIDATION" } });
  });
  Object.assign(acm, { send });
  return { acm, asked, send };
}

describe("CertificateChecker over the cluster's kept reads", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("remembers an issued certificate for a minute, whoever asks, and forgets it with the term", async () => {
    vi.useFakeTimers({ now: 0 });
    const { acm, asked } = fakeAcm();
    const kept = new ClusterReads();
    const checker = new CertificateChecker(acm, kept.certificates);
    await checker.check([ISSUED, IAM]);
    vi.advanceTimersByTime(CLUSTER_CACHE_MS - 1);
    await withPriority("background", () => checker.check([ISSUED]));
    expect(asked).toEqual([ISSUED]);
    vi.advanceTimersByTime(1);
    // A pass a user waits for checks it again too: a certificate is not among the shared reads kept ten minutes.
    await withPriority("user", () => checker.check([ISSUED]));
    expect(asked).toEqual([ISSUED, ISSUED]);
    kept.forget();
    await checker.check([ISSUED]);
    expect(asked).toEqual([ISSUED, ISSUED, ISSUED]);
  });

  it("checks a certificate that is not issued at every pass, and stops at the first such", async () => {
    const { acm, asked, send } = fakeAcm();
    const checker = new CertificateChecker(acm, new ClusterReads().certificates);
    await expect(checker.check([PENDING, ISSUED])).rejects.toThrow(
      `certificate ${PENDING} is PENDING_VALIDATION`,
    );
    await expect(checker.check([PENDING])).rejects.toThrow("not ISSUED");
    expect(asked).toEqual([PENDING, PENDING]);
    expect(send).toHaveBeenCalledWith(expect.any(DescribeCertificateCommand));
  });
});
