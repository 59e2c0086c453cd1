// Regions on the nemesis harness's hosts: several Tally clusters whose links
// can be cut, and the client-side accounting a test judges them with.
export { RegionCluster, regionArgs, type Region, type RegionsOptions } from './region-cluster.ts';
export { countIncrements, acknowledgedBefore, acknowledgedShare, type Counted } from './accounting.ts';
