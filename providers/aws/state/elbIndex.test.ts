import { describe, expect, test } from "vitest";
import { READ_ALONE_CALLS, UNCONFIRMED_CALLS, worthListing, worthTagPages } from "./elbIndex.ts";

describe("worthListing", () => {
  test("the first listings are always read: what they cost is not known yet", () => {
    expect(worthListing(0, 0)).toBe(true);
  });

  test("read again once what the Services asking would pay alone reaches what the listings cost", () => {
    // 1000 Services: 3 pages of load balancers, 3 of target groups, 20 of tags.
    const cost = 26;
    expect(worthListing(READ_ALONE_CALLS, cost)).toBe(false);
    expect(worthListing(8 * READ_ALONE_CALLS, cost)).toBe(false);
    expect(worthListing(9 * READ_ALONE_CALLS, cost)).toBe(true);
    // A resync's confirmations weigh more: without the listings each would observe in full.
    expect(worthListing(6 * UNCONFIRMED_CALLS, cost)).toBe(true);
  });

  test("a small account's listings (a page each) are as cheap as one Service read alone", () => {
    expect(worthListing(READ_ALONE_CALLS, 3)).toBe(true);
  });
});

describe("worthTagPages", () => {
  test("a new Service among a thousand reads its own tags, not the cluster's 21 pages", () => {
    expect(worthTagPages(1, 21, 2002)).toBe(false);
    expect(worthTagPages(20, 21, 2002)).toBe(false);
  });

  test("once as many full observations asked within the minute as the pages cost, the cluster's are read", () => {
    expect(worthTagPages(21, 21, 2002)).toBe(true);
    // Never read: estimated from the account's listings, at most what the cluster holds.
    expect(worthTagPages(20, 0, 2002)).toBe(false);
    expect(worthTagPages(21, 0, 2002)).toBe(true);
  });

  test("a small cluster's tags (one page) cost what one Service's own read does", () => {
    expect(worthTagPages(1, 0, 4)).toBe(true);
    expect(worthTagPages(1, 1, 4)).toBe(true);
  });
});
