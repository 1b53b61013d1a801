// What the speaker's memory is made of before it does anything: the resident memory of a fresh Node.js
// process that only loads a module, less that of one that loads nothing. Loading is most of an idle
// speaker's RSS, so this says which dependency to cut first.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The speaker as the image runs it (compiled: useCompiledSpeaker), else its source. */
const speaker = () =>
  process.env.PORTICO_SPEAKER_MAIN?.replace(/main\.js$/, "speaker.js") ??
  fileURLToPath(new URL("../../../speaker/speaker.ts", import.meta.url));
const MODULES = {
  "prom-client": () => "prom-client",
  pino: () => "pino",
  "js-yaml": () => "js-yaml",
  "the speaker (everything)": speaker,
};

/** MiB of RSS each module adds to an empty Node.js process (after a full garbage collection). */
export async function moduleFootprint(): Promise<Record<string, number>> {
  const rss = async (specifier?: string) => {
    const script = `${specifier ? `await import(${JSON.stringify(specifier)});` : ""} globalThis.gc(); console.log(process.memoryUsage().rss);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--input-type=module", "-e", script],
      { cwd: fileURLToPath(new URL("../../..", import.meta.url)) },
    );
    return Number(stdout.trim()) / 2 ** 20;
  };
  const empty = await rss();
  const out: Record<string, number> = { "node itself": Math.round(empty) };
  for (const [name, specifier] of Object.entries(MODULES))
    out[name] = Math.round((await rss(specifier())) - empty);
  return out;
}
