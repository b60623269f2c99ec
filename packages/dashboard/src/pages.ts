/**
 * The dashboard's pages, each served at `{mount}/dashboard/{page}`. The server answers these paths with
 * the app's HTML and the app routes on them, so this list is the one place both read.
 */
export const dashboardPages = ['messages', 'tracking-ids', 'suppressions', 'allowlist', 'deliverability', 'changes'] as const;

export type DashboardPage = (typeof dashboardPages)[number];

export function isDashboardPage(name: string): name is DashboardPage {
  return (dashboardPages as readonly string[]).includes(name);
}
