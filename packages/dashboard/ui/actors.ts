import type { DeliveryEventType } from '@mailwarden/core';
import { isProvider, providerLabels } from './labels.js';

/** An event's type as a noun: "Amazon SES complaint event". */
const eventNouns: Record<DeliveryEventType, string> = {
  sent: 'send',
  delivered: 'delivery',
  deferred: 'deferral',
  bounced: 'bounce',
  complained: 'complaint',
  rejected: 'rejection',
  opened: 'open',
  clicked: 'click',
  unsubscribed: 'unsubscribe',
  unknown: 'unknown',
};

const ruleNames: Record<string, string> = {
  soft_bounces: 'soft-bounce rule',
  expiry: 'expiry',
  alerts: 'alert rule',
  outbound: 'outbound delivery rule',
};

/**
 * Who made a change, as a sentence names them (the grammar is core's store/actor.ts; docs/dashboard.md,
 * "Changes"): `key:ops` → "key ops", `webhook:ses:complained` → "Amazon SES complaint event",
 * `rule:soft_bounces` → "soft-bounce rule". An actor of a kind this dashboard does not know is shown as it is.
 */
export function actorText(actor: string): string {
  const [type = '', ...rest] = actor.split(':');
  const name = rest.join(':');
  switch (type) {
    case 'key':
      return `key ${name}`;
    case 'webhook': {
      const [provider = '', event = ''] = rest;
      const noun = Object.hasOwn(eventNouns, event) ? eventNouns[event as DeliveryEventType] : event;
      return isProvider(provider) ? `${providerLabels[provider]} ${noun} event` : actor;
    }
    case 'rule':
      return Object.hasOwn(ruleNames, name) ? ruleNames[name]! : `rule ${name}`;
    case 'import':
      return `import ${name}`;
    case 'unsubscribe':
      return rest.length === 0 ? 'one-click unsubscribe' : `one-click unsubscribe from stream ${name}`;
    case 'config':
      return 'the configuration';
    default:
      return actor;
  }
}

/** The same, starting a sentence. */
export function actorSubject(actor: string): string {
  const text = actorText(actor);
  return text.charAt(0).toUpperCase() + text.slice(1);
}
