// The import rules `make check` holds the programs to (DESIGN.md, "One direction of flow"): any violation, and any
// import cycle, fails the check.
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
      name: "providers-know-no-controller",
      comment:
        "A provider is given what it reads of the cluster (providers/cluster.ts, descriptor.ts); it never reaches into the controller.",
      severity: "error",
      from: { path: "^providers/" },
      to: { path: "^controller/" },
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
    {
      name: "speaker-kube-knows-no-mode",
      comment:
        "speaker/kube/ is the speaker's Kubernetes I/O, which the modes use: it knows nothing of speaker/l2/ or speaker/bgp/.",
      severity: "error",
      from: { path: "^speaker/kube/" },
      to: { path: "^speaker/(l2|bgp)/" },
    },
    {
      name: "speaker-modes-stay-apart",
      comment:
        "The L2 and BGP modes are peers behind speaker/modes/mode.ts; which pools each serves is speaker/modes/arbiter.ts's.",
      severity: "error",
      from: { path: "^speaker/(l2|bgp)/" },
      to: { path: "^speaker/(l2|bgp)/", pathNot: "^speaker/$1/" },
    },
    {
      name: "speaker-modes-reached-only-by-the-wiring",
      comment:
        "Only the speaker's wiring (speaker.ts, main.ts) reaches into a mode's folder; everything else, speaker/modes/ included, serves the modes.",
      severity: "error",
      from: { path: "^speaker/", pathNot: "^speaker/((speaker|main)\\.ts$|l2/|bgp/)" },
      to: { path: "^speaker/(l2|bgp)/" },
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
