import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, type Dispatcher, request } from 'undici';

/** Why a probe_image_url was not used: 400 (refused, unfetchable) or 413 (too large). Never charged. */
export class ProbeFetchError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** Addresses a server must never be made to reach for a caller: everything that is not the public internet. */
export function nonPublicAddresses(): BlockList {
  const blocked = new BlockList();
  for (const [network, prefix] of [
    ['0.0.0.0', 8], // "this" network
    ['10.0.0.0', 8], // private
    ['100.64.0.0', 10], // carrier-grade NAT
    ['100.100.100.200', 32], // Alibaba Cloud metadata
    ['127.0.0.0', 8], // loopback
    ['169.254.0.0', 16], // link-local, with the AWS/GCP/Azure metadata address 169.254.169.254
    ['172.16.0.0', 12], // private
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // documentation
    ['192.168.0.0', 16], // private
    ['198.18.0.0', 15], // benchmarking
    ['198.51.100.0', 24], // documentation
    ['203.0.113.0', 24], // documentation
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, and the broadcast address
  ] as const) {
    blocked.addSubnet(network, prefix, 'ipv4');
  }
  for (const [network, prefix] of [
    ['::', 128], // unspecified
    ['::1', 128], // loopback
    ['64:ff9b::', 96], // NAT64
    ['100::', 64], // discard
    ['2001:db8::', 32], // documentation
    ['fc00::', 7], // unique-local, with AWS's metadata address fd00:ec2::254
    ['fe80::', 10], // link-local
    ['ff00::', 8], // multicast
  ] as const) {
    blocked.addSubnet(network, prefix, 'ipv6');
  }
  return blocked;
}

const BLOCKED = nonPublicAddresses();

/** The 16 bytes of an IPv6 address (zone id dropped, a dotted IPv4 tail allowed); the caller checked isIP. */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').filter(Boolean) : []);
  const before = groups(head);
  const after = groups(tail);
  const hextets = tail === undefined ? before : [...before, ...Array(8 - before.length - after.length).fill('0'), ...after];
  const bytes = new Uint8Array(16);
  hextets.forEach((hextet, index) => {
    const value = parseInt(hextet, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}

const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
const ipv4At = (bytes: Uint8Array, at: number) => Array.from(bytes.subarray(at, at + 4)).join('.');

/**
 * The IPv4 address an IPv6 address carries, by which it is judged: IPv4-compatible (::a.b.c.d),
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16). 'refused' for forms whose embedded address cannot be judged simply: Teredo
 * (2001::/32, an obfuscated client address) and local-use NAT64 (64:ff9b:1::/48, any layout).
 */
function embeddedIPv4(bytes: Uint8Array): string | 'refused' | undefined {
  const word = (at: number) => (bytes[at] << 8) | bytes[at + 1];
  if (zeros(bytes, 0, 12)) return ipv4At(bytes, 12);
  if (zeros(bytes, 0, 10) && word(10) === 0xffff) return ipv4At(bytes, 12);
  if (zeros(bytes, 0, 8) && word(8) === 0xffff && word(10) === 0) return ipv4At(bytes, 12);
  if (word(0) === 0x64 && word(2) === 0xff9b) {
    if (zeros(bytes, 4, 12)) return ipv4At(bytes, 12);
    if (word(4) === 1) return 'refused';
  }
  if (word(0) === 0x2002) return ipv4At(bytes, 2);
  if (word(0) === 0x2001 && word(2) === 0) return 'refused';
  return undefined;
}

/** True for a public address; an IPv6 address that embeds an IPv4 address is judged by that address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  const embedded = embeddedIPv4(ipv6Bytes(address));
  if (embedded === 'refused') return false;
  if (embedded !== undefined) return !BLOCKED.check(embedded, 'ipv4');
  return !BLOCKED.check(address.replace(/%.*$/, ''), 'ipv6');
}

export interface ProbeFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** At most this many redirects are followed, each checked like the first URL. */
  maxRedirects?: number;
  /** Which resolved addresses may be connected to; public ones by default. */
  isAllowed?: (address: string) => boolean;
  /** Name resolution; the system's by default. */
  resolve?: (hostname: string) => Promise<string[]>;
  /** Extra trusted certificate authorities (PEM), for tests with their own certificates. */
  ca?: string | Buffer;
}

function systemResolve(hostname: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses.map((entry) => entry.address)),
    ),
  );
}

/**
 * Fetches a caller's probe_image_url for /face/search (docs/api.md): https only; every address
 * the host resolves to, and of each redirect, must be allowed (public), checked in the connection's
 * own lookup so the address checked is the address connected to (no DNS rebinding in between);
 * one time limit for the whole fetch; the body is cut off past maxBytes.
 */
export class ProbeImageFetcher {
  private readonly agent: Agent;
  private readonly isAllowed: (address: string) => boolean;
  private readonly resolve: (hostname: string) => Promise<string[]>;

  constructor(private readonly options: ProbeFetchOptions) {
    this.isAllowed = options.isAllowed ?? isPublicAddress;
    this.resolve = options.resolve ?? systemResolve;
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      this.allowedAddresses(hostname).then(
        (addresses) => {
          if (lookupOptions.all)
            callback(
              null,
              addresses.map((address) => ({ address, family: isIP(address) })),
            );
          else callback(null, addresses[0], isIP(addresses[0]));
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 0),
      );
    };
    this.agent = new Agent({ connect: { lookup, ...(options.ca ? { ca: options.ca } : {}) }, connections: 16 });
  }

  /** Every address of the host, or an error naming the first that is refused. */
  private async allowedAddresses(hostname: string): Promise<string[]> {
    const bare = hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(bare) ? [bare] : await this.resolve(bare);
    } catch {
      throw new ProbeFetchError(400, `probe_image_url: the host "${bare}" could not be resolved.`);
    }
    if (addresses.length === 0) throw new ProbeFetchError(400, `probe_image_url: the host "${bare}" has no address.`);
    const refused = addresses.find((address) => !this.isAllowed(address));
    if (refused) {
      throw new ProbeFetchError(400, `probe_image_url: the host "${bare}" resolves to ${refused}, which is not a public address; it is not fetched.`);
    }
    return addresses;
  }

  /** The image's bytes as standard base64. */
  async fetch(url: URL): Promise<string> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let current = url;
    for (let redirects = 0; ; redirects++) {
      if (current.protocol !== 'https:')
        throw new ProbeFetchError(400, `probe_image_url: a redirect led to ${current.protocol}//, and only https is fetched.`);
      // A host name is checked by the connection's lookup; an address literal never goes through a
      // lookup, so it is checked here, before any connection.
      if (isIP(current.hostname.replace(/^\[|\]$/g, ''))) await this.allowedAddresses(current.hostname);
      let response: Dispatcher.ResponseData;
      try {
        response = await request(current, { dispatcher: this.agent, method: 'GET', signal, headers: { accept: 'image/*' } });
      } catch (error) {
        if (error instanceof ProbeFetchError) throw error;
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof ProbeFetchError) throw cause;
        throw new ProbeFetchError(
          400,
          `probe_image_url could not be fetched: ${signal.aborted ? `no answer within ${this.options.timeoutMs} ms` : (error as Error).message}.`,
        );
      }
      if (response.statusCode >= 300 && response.statusCode < 400 && response.headers.location) {
        await response.body.dump();
        if (redirects >= (this.options.maxRedirects ?? 3)) throw new ProbeFetchError(400, 'probe_image_url: too many redirects.');
        current = new URL(String(response.headers.location), current);
        continue;
      }
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw new ProbeFetchError(400, `probe_image_url answered HTTP ${response.statusCode}; it must answer 200 with the image.`);
      }
      const declared = Number(response.headers['content-length'] ?? NaN);
      if (declared > this.options.maxBytes) {
        response.body.destroy();
        throw new ProbeFetchError(
          413,
          `The image at probe_image_url is ${declared} bytes; the limit is ${this.options.maxBytes} bytes (IMAGE_MAX_BYTES).`,
        );
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of response.body) {
          size += (chunk as Buffer).length;
          if (size > this.options.maxBytes) {
            response.body.destroy();
            throw new ProbeFetchError(
              413,
              `The image at probe_image_url is larger than the limit of ${this.options.maxBytes} bytes (IMAGE_MAX_BYTES).`,
            );
          }
          chunks.push(chunk as Buffer);
        }
      } catch (error) {
        if (error instanceof ProbeFetchError) throw error;
        throw new ProbeFetchError(
          400,
          `probe_image_url could not be read: ${signal.aborted ? `no answer within ${this.options.timeoutMs} ms` : (error as Error).message}.`,
        );
      }
      if (size === 0) throw new ProbeFetchError(400, 'probe_image_url answered an empty body.');
      return Buffer.concat(chunks).toString('base64');
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
