/**
 * The test events the demo sends to a webhook workflow, by the parent (catalog) workflow id of
 * the demo catalog: what Stripe, HubSpot or Mailchimp would POST, in the shape the catalog's
 * blocks read. Each workflow has a few good events, sent in turn so runs differ, and one that
 * makes the run fail for a reason a real sender could cause.
 */

type Payload = Record<string, unknown>;

export interface SampleEvents {
  /** What a good event is, for the button: "a Stripe payment". */
  noun: string;
  /** Made when sent, so dates are today's. */
  samples: Array<() => Payload>;
  failing: {
    payload: () => Payload;
    /** Why it fails, completing "Sent a Stripe payment …": "whose amount arrives as text". */
    why: string;
  };
}

const today = () => new Date().toISOString().slice(0, 10);

export const SAMPLE_EVENTS: Record<string, SampleEvents> = {
  // Post new Stripe payments to Slack (announces payments of at least 50).
  '64b14ff1704e5bc1057506db': {
    noun: 'a Stripe payment',
    samples: [
      () => ({
        id: 'pi_3QxLr8Kd2tYp0a1B',
        object: 'payment_intent',
        amount: 249,
        currency: 'usd',
        customer: 'cus_RfQ2mN8xVb',
        description: 'Orbit Pro, yearly',
      }),
      () => ({
        id: 'pi_3QxLsB7Hn4kQw2cD',
        object: 'payment_intent',
        amount: 1200,
        currency: 'eur',
        customer: 'cus_Rg7TzK1pLm',
        description: 'Orbit Team, 10 seats',
      }),
      // Below the minimum: the condition stops the run, which still finishes.
      () => ({
        id: 'pi_3QxLtC2Wm9rXe3fG',
        object: 'payment_intent',
        amount: 19,
        currency: 'usd',
        customer: 'cus_Rh4YqP6sNc',
        description: 'Orbit Starter, monthly',
      }),
    ],
    failing: {
      payload: () => ({
        id: 'pi_3QxLuD5Tj8vYh4kL',
        object: 'payment_intent',
        amount: '1,249.00',
        currency: 'usd',
        customer: 'cus_RfQ2mN8xVb',
      }),
      why: 'whose amount arrives as text ("1,249.00")',
    },
  },
  // Announce won HubSpot deals in Slack.
  '64b1d6aac655b8a937b7db20': {
    noun: 'a HubSpot deal update',
    samples: [
      () => ({
        dealId: 9481726350,
        dealname: 'Acme Corp renewal',
        stage: 'closedwon',
        pipeline: 'default',
        amount: 18000,
      }),
      () => ({
        dealId: 9481726377,
        dealname: 'Globex expansion',
        stage: 'closedwon',
        pipeline: 'default',
        amount: 42500,
      }),
      // Not won: the condition stops the run.
      () => ({
        dealId: 9481726391,
        dealname: 'Initech pilot',
        stage: 'contractsent',
        pipeline: 'default',
        amount: 6500,
      }),
    ],
    failing: {
      payload: () => ({
        dealId: 9481726402,
        dealname: 'Umbrella Co. upgrade',
        stage: 'closedwon',
        pipeline: 'default',
      }),
      why: 'without an amount',
    },
  },
  // Log new Stripe customers in Google Sheets.
  '64b1b0ffdd247fb57262db75': {
    noun: 'a new Stripe customer',
    samples: [
      () => ({ id: 'cus_Rk2VnB7qLs', name: 'Ada Lovelace', email: 'ada@analytical.example', created: today() }),
      () => ({ id: 'cus_Rk3WpC8rMt', name: 'Katherine Johnson', email: 'katherine@orbital.example', created: today() }),
    ],
    failing: {
      payload: () => ({ id: 'cus_Rk4XqD9sNu', name: 'Grace Hopper', created: today() }),
      why: 'without an e-mail address',
    },
  },
  // Copy new Mailchimp subscribers to Google Sheets.
  '64b13345c5ce3aeb4f592a6f': {
    noun: 'a new Mailchimp subscriber',
    samples: [
      () => ({ type: 'subscribe', email: 'margaret@apollo.example', name: 'Margaret Hamilton' }),
      () => ({ type: 'subscribe', email: 'radia@spanning.example', name: 'Radia Perlman' }),
    ],
    failing: {
      payload: () => ({ type: 'subscribe', name: 'Hedy Lamarr' }),
      why: 'without an e-mail address',
    },
  },
  // Create a HubSpot task for failed Stripe payments.
  '64b19ea54aa94ca62c61606e': {
    noun: 'a failed Stripe payment',
    samples: [
      () => ({
        id: 'pi_3QxM1aEf6gHi7jKl',
        object: 'payment_intent',
        amount: 89,
        currency: 'usd',
        customer: 'cus_Rm5ZtF2uPw',
        last_payment_error: { code: 'card_declined', message: 'Your card was declined.' },
      }),
    ],
    failing: {
      payload: () => ({ id: 'pi_3QxM2bFg7hIj8kLm', object: 'payment_intent', amount: 89, currency: 'usd' }),
      why: 'without a customer',
    },
  },
};
