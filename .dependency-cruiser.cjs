// The import rules `make check` holds the programs to (DESIGN.md, "One direction of flow"). The violations that
// were there when a rule came are listed in .dependency-cruiser-known-violations.json and are reported as known
// (warnings) until they are removed; a new one fails the check.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "An import cycle: modules that cannot be understood, tested or loaded one without the other.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "shared-imports-nothing-of-the-programs",
      comment: "shared/ is what both programs speak; it must not depend on either of them or on a provider.",
      severity: "error",
      from: { path: "^shared/" },
      to: { path: "^(controller|speaker|providers)/" },
    },
    {
      name: "controller-reaches-providers-through-the-interface",
      comment:
        "The controller core knows no cloud: a provider is reached only through providers/*.ts (and the annotation catalogue).",
      severity: "error",
      from: { path: "^controller/" },
      to: { path: "^providers/(aws|azure|metal)/" },
    },
    {
      name: "speaker-knows-no-provider",
      comment: "The speaker shares only shared/ with the controller.",
      severity: "error",
      from: { path: "^speaker/" },
      to: { path: "^(controller|providers)/" },
    },
    {
      name: "providers-stay-apart",
      comment:
        "One provider does not reach into another; what they share lives in providers/*.ts or shared/.",
      severity: "error",
      from: { path: "^providers/(aws|azure|metal)/" },
      to: { path: "^providers/(aws|azure|metal)/", pathNot: "^providers/$1/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|\\.cache)/|\\.test\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
