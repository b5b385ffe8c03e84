import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Link-local addresses, where cloud metadata services answer: 169.254.0.0/16 and fe80::/10, and AWS's fd00:ec2::254. */
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');
LINK_LOCAL.addAddress('fd00:ec2::254', 'ipv6');

/** Names of cloud metadata services, which must never receive a request from here. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

export function isLinkLocal(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return LINK_LOCAL.check(mapped, 'ipv4');
  return LINK_LOCAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why a webhook URL cannot be used, or undefined when it can: parsed as browsers and fetch parse it
 * (WHATWG URL), http or https, without credentials (a secret in a URL ends up in logs), and not a
 * link-local or cloud-metadata address unless `allowLinkLocal` (WEBHOOK_ALLOW_LINK_LOCAL).
 */
export function webhookUrlProblem(raw: string, allowLinkLocal: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must start with http:// or https://';
  if (url.username !== '' || url.password !== '') return 'url must not hold a user name or password: authenticate with the signature instead';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!allowLinkLocal && (isLinkLocal(host) || METADATA_NAMES.has(host.replace(/\.$/, '')))) {
    return 'url is a link-local or cloud-metadata address, refused unless WEBHOOK_ALLOW_LINK_LOCAL=true';
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup for webhook connections that refuses a name resolving to a link-local address, so a
 * name cannot lead a delivery to a metadata service that its URL could not name.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const allowed = addresses.filter((entry) => !isLinkLocal(entry.address));
    if (allowed.length === 0) {
      const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a link-local address, refused (WEBHOOK_ALLOW_LINK_LOCAL)`);
      refused.code = 'ELINKLOCAL';
      return callback(refused, []);
    }
    if (options.all) return callback(null, allowed);
    const first = allowed[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
}
