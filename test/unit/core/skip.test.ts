import { describe, expect, it } from 'vitest';
import { fanOutEventId, publicEventIdOfDelivery } from '../../../lambda/core/fan-out-id.js';
import { findSkipTarget, SkipRefusal } from '../../../lambda/core/skip.js';

describe('findSkipTarget', () => {
  const failing = { headEventId: 'evt_1', headOrderingKey: 'k1', headAttempts: 2 };

  it('names the failing head, or the one the operator saw', () => {
    expect(findSkipTarget(failing, undefined)).toEqual({ eventId: 'evt_1', orderingKey: 'k1' });
    expect(findSkipTarget(failing, 'evt_1')).toEqual({ eventId: 'evt_1', orderingKey: 'k1' });
    expect(findSkipTarget(failing, 'evt_9')).toEqual({ refusal: SkipRefusal.headChanged });
  });

  it('names a fan-out’s delivery by its event’s id, as the API shows it', () => {
    const delivery = fanOutEventId('evt_1', 'sub_a');
    expect(findSkipTarget({ ...failing, headEventId: delivery }, 'evt_1')).toEqual({ eventId: delivery, orderingKey: 'k1' });
    expect(findSkipTarget({ ...failing, headEventId: delivery }, delivery)).toEqual({ refusal: SkipRefusal.headChanged });
    expect(publicEventIdOfDelivery(delivery)).toBe('evt_1');
  });

  it('refuses a head whose batch failed before it was tried alone, and a group with no head', () => {
    expect(findSkipTarget({ ...failing, headAttempts: 0 }, undefined)).toEqual({ refusal: SkipRefusal.noFailingHead });
    expect(findSkipTarget({ headEventId: undefined, headOrderingKey: undefined }, undefined)).toEqual({ refusal: SkipRefusal.noFailingHead });
    expect(findSkipTarget(undefined, 'evt_1')).toEqual({ refusal: SkipRefusal.noFailingHead });
  });
});
