// Where the documentation says how to turn on what a page needs: the service's configuration, with the
// library's own section named beside it in the text.
const docs = 'https://github.com/mailwarden/mailwarden/blob/main/docs/';

export const docsLinks = {
  alerts: `${docs}server.md#deliverability-alerts`,
  changeFeed: `${docs}server.md#the-change-feed`,
  outbound: `${docs}outbound-webhooks.md#configuration`,
} as const;
