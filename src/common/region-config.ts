// Region names and the --peer-regions list: parsed the same way by every
// process that takes them. Pure: no I/O.
import { ConfigError, parseAddress } from './config.ts';
import { peerRegionAddressesMax, peerRegionsMax } from './limits.ts';
import { isRegionName, regionNameBytesMax } from '../wire/index.ts';

/** A region name ('' = no region: the cluster runs alone), or a ConfigError naming `what`. */
export function checkRegionName(name: string, what = '--region'): string {
  if (name !== '' && !isRegionName(name))
    throw new ConfigError(
      `${what} must be 1..${regionNameBytesMax} lower-case letters, digits and '-', starting with a letter, got "${name}"`,
    );
  return name;
}

export interface PeerRegion {
  name: string;
  /** host:port of that region's routers, tried in turn. */
  addresses: string[];
}

/**
 * `NAME=HOST:PORT[,HOST:PORT...][;NAME=...]`: each peer region once, never
 * this region itself, every address a host:port.
 */
export function parsePeerRegions(value: string, ownRegion: string): PeerRegion[] {
  if (value.trim() === '') return [];
  if (ownRegion === '') throw new ConfigError("--peer-regions needs --region (this cluster's own region name)");
  const peers: PeerRegion[] = [];
  for (const entry of value.split(';')) {
    const equals = entry.indexOf('=');
    if (equals < 0) throw new ConfigError(`--peer-regions entry "${entry.trim()}" must be NAME=HOST:PORT[,HOST:PORT...]`);
    const name = checkRegionName(entry.slice(0, equals).trim(), '--peer-regions region name');
    if (name === '') throw new ConfigError(`--peer-regions entry "${entry.trim()}" has no region name`);
    if (name === ownRegion) throw new ConfigError(`--peer-regions names this region (${ownRegion}) as its own peer`);
    if (peers.some((peer) => peer.name === name)) throw new ConfigError(`--peer-regions names region ${name} twice`);
    const addresses = entry
      .slice(equals + 1)
      .split(',')
      .map((address) => address.trim());
    if (addresses.length > peerRegionAddressesMax)
      throw new ConfigError(`--peer-regions gives region ${name} ${addresses.length} addresses; the limit is ${peerRegionAddressesMax}`);
    for (const address of addresses) parseAddress(address, `--peer-regions ${name}`);
    peers.push({ name, addresses });
  }
  if (peers.length > peerRegionsMax) throw new ConfigError(`--peer-regions names ${peers.length} regions; the limit is ${peerRegionsMax}`);
  return peers;
}
