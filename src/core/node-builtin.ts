/**
 * A Node built-in module, looked up synchronously (process.getBuiltinModule, Node ≥ 20.16), or
 * undefined outside Node (a browser) and on older Node: callers go without what it offers.
 */
export function nodeBuiltin<T>(name: string): T | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (m: string) => unknown } }).process;
  return proc?.getBuiltinModule?.(name) as T | undefined;
}
