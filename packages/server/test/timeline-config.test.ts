// The service's one timeline setting: personal data (clicked URLs, user agents) stays out unless set.
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';

describe('timelinePersonalData', () => {
  test('is off by default, and MAILWARDEN_TIMELINE_PERSONAL_DATA=true turns it on', () => {
    expect(loadConfig({ env: {} }).timelinePersonalData).toBe(false);
    expect(loadConfig({ env: { MAILWARDEN_TIMELINE_PERSONAL_DATA: 'true' } }).timelinePersonalData).toBe(true);
    expect(loadConfig({ env: { MAILWARDEN_TIMELINE_PERSONAL_DATA: 'false' } }).timelinePersonalData).toBe(false);
  });
});
