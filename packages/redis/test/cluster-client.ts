import { Cluster } from 'ioredis';

/** An ioredis Cluster client for the `host:port,host:port…` list that scripts/test-services.ts provides. */
export function clusterClient(nodes: string): Cluster {
  return new Cluster(
    nodes.split(',').map((node) => {
      const [host, port] = node.split(':');
      return { host: host!, port: Number(port) };
    }),
  );
}
