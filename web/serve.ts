/**
 * `npm run web`: bundles the page (web/main.ts with esbuild, for the browser) and serves it.
 *
 *   npm run web                  # http://localhost:8080/
 *   npm run web -- --port 9000
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
// The page imports the library as a user does, as "gradsim": in the browser that is src/index.ts
// (src/node.ts, what the "source" condition names, adds the Node-only parts).
const browserEntry = join(here, "..", "src", "index.ts");

/** The page's script bundled for the browser (throws esbuild's message if it does not build). */
export async function bundlePage(): Promise<string> {
  const r = await build({
    entryPoints: [join(here, "main.ts")],
    bundle: true,
    alias: { gradsim: browserEntry },
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    logLevel: "silent",
    sourcemap: "inline",
  });
  return r.outputFiles[0]!.text;
}

/** Serve the page on `port` (0: any free port); resolves to the server and its address. */
export async function servePage(port: number): Promise<{ server: Server; url: string }> {
  const script = await bundlePage();
  const html = readFileSync(join(here, "index.html"), "utf8");
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const body =
      path === "/" || path === "/index.html"
        ? { type: "text/html; charset=utf-8", data: html }
        : path === "/main.js"
          ? { type: "text/javascript; charset=utf-8", data: script }
          : null;
    if (!body) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${path}`);
      return;
    }
    res.writeHead(200, { "content-type": body.type, "cache-control": "no-store" }).end(body.data);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return { server, url: `http://localhost:${(server.address() as AddressInfo).port}/` };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf("--port");
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  if (!(Number.isInteger(port) && port >= 0 && port < 65536)) {
    console.error(`--port: expected a port number, got ${process.argv[i + 1]}`);
    process.exit(2);
  }
  try {
    const { url } = await servePage(port);
    console.log(
      `gradsim page at ${url} (Ctrl-C stops). ` +
        `WebGPU needs a browser that exposes navigator.gpu with a hardware adapter; ` +
        `elsewhere the page computes on the CPU.`,
    );
  } catch (e) {
    console.error(`npm run web: ${(e as Error).message}`);
    process.exit((e as { code?: string }).code === "EADDRINUSE" ? 2 : 1);
  }
}
