// The AWS emulator's answer time per call as the account grows, with test/env/moto_server.py's indexes and without
// them (moto's own server), in one run: the calls Portico makes for one Service, and first pages (of 10) of the
// cluster's tags.
//
//   make bench-moto                      (BENCH_MOTO_SIZES="10 100 500 1000" by default)
//
// A call's ratio is its median at the largest size over its median at the smallest; AWS's is about 1.
import { report } from "./report.ts";
import { motoScaling, scalingTable, type MotoScaling } from "../test/env/motoScaling.ts";

const sizes = (process.env.BENCH_MOTO_SIZES ?? "10 100 500 1000").split(/\s+/).filter(Boolean).map(Number);

function ratios(result: MotoScaling): Record<string, number> {
  return Object.fromEntries(
    Object.entries(result.calls).map(([name, ms]) => [name, +(ms[ms.length - 1]! / ms[0]!).toFixed(2)]),
  );
}

await report("moto", async () => {
  const indexed = await motoScaling(sizes, false);
  console.log(scalingTable(indexed));
  const plain = await motoScaling(sizes, true);
  console.log(scalingTable(plain));
  return {
    sizes,
    indexed: { ...indexed, ratioLargestToSmallest: ratios(indexed) },
    plain: { ...plain, ratioLargestToSmallest: ratios(plain) },
  };
});
