// Output for people and for programs: trees and check lists with colour only on a terminal, or JSON/YAML.
import { dumpYaml } from "@kubernetes/client-node";
import type { InspectNode } from "../../providers/provider.ts";

export type OutputFormat = "text" | "wide" | "json" | "yaml";

export class Printer {
  readonly format: OutputFormat;
  private readonly colour: boolean;
  private readonly write: (s: string) => void;

  constructor(format: OutputFormat, opts: { colour?: boolean; write?: (s: string) => void } = {}) {
    this.format = format;
    this.colour = opts.colour ?? (process.stdout.isTTY === true && !process.env.NO_COLOR);
    this.write = opts.write ?? ((s) => process.stdout.write(s));
  }

  get structured(): boolean {
    return this.format === "json" || this.format === "yaml";
  }

  data(value: unknown): void {
    this.write(this.format === "yaml" ? dumpYaml(value) : JSON.stringify(value, null, 2) + "\n");
  }

  line(text = ""): void {
    this.write(text + "\n");
  }

  paint(text: string, health: InspectNode["health"] | "bold" | "dim"): string {
    if (!this.colour || !health) return text;
    const code = { ok: 32, warn: 33, bad: 31, bold: 1, dim: 2 }[health];
    return `\u001b[${code}m${text}\u001b[0m`;
  }

  tree(nodes: InspectNode[], indent = ""): void {
    nodes.forEach((node, i) => {
      const last = i === nodes.length - 1;
      this.line(`${indent}${last ? "└─ " : "├─ "}${this.paint(node.label, node.health)}`);
      if (node.children?.length) this.tree(node.children, indent + (last ? "   " : "│  "));
    });
  }
}
