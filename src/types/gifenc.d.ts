declare module "gifenc";
