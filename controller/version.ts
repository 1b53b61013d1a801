// Portico's version: package.json's, which the chart's appVersion follows. Imported rather than read from disk, so
// a bundle carries it (porticoctl's single executable has no package.json beside it). The controller publishes it
// on its leader Lease, and `porticoctl version` prints its own beside the running controllers'.
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
