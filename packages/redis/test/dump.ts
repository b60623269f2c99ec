import type { Cluster, Redis } from 'ioredis';

/**
 * Everything a store holds under `keyPrefix`, as text, for the erasure proof (docs/decisions.md,
 * "Erasure"): per key, in byte order, a line `<key> <type>`, then each value on a line of its own
 * (strings; hash fields and values; set members; sorted-set members and scores; list items; stream
 * entry IDs with their fields and values). Bytes are decoded as UTF-8 and nothing is escaped, so an
 * address stored in any form shows as that form.
 */
export async function dumpRedis(client: Redis | Cluster, keyPrefix: string): Promise<string> {
  const nodes: (Redis | Cluster)[] = client.isCluster ? (client as Cluster).nodes('master') : [client];
  const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const keys: Buffer[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next.toString();
      keys.push(...found);
    } while (cursor !== '0');
  }
  keys.sort(Buffer.compare);
  const lines: string[] = [];
  for (const key of keys) {
    const type = await client.type(key);
    lines.push(`${key.toString()} ${type}`);
    const values = await valuesOf(client, key, type);
    for (const value of values.flat(Number.POSITIVE_INFINITY) as (Buffer | string | number | null)[]) lines.push(`  ${String(value)}`);
  }
  return lines.join('\n');
}

function valuesOf(client: Redis | Cluster, key: Buffer, type: string): Promise<unknown[]> {
  switch (type) {
    case 'string':
      return client.getBuffer(key).then((value) => [value]);
    case 'hash':
      return client.callBuffer('HGETALL', key) as Promise<unknown[]>;
    case 'set':
      return client.smembersBuffer(key);
    case 'zset':
      return client.callBuffer('ZRANGE', key, 0, -1, 'WITHSCORES') as Promise<unknown[]>;
    case 'list':
      return client.lrangeBuffer(key, 0, -1);
    case 'stream':
      return client.callBuffer('XRANGE', key, '-', '+') as Promise<unknown[]>;
    default:
      throw new Error(`a key of type ${type}: the dump does not know it`);
  }
}
