declare module "bunny" {
  /** The Stanford bunny (mikolalysenko/bunny): 1839 vertices, 3674 triangles. */
  export const positions: [number, number, number][];
  export const cells: [number, number, number][];
}
