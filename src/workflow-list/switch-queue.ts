/**
 * A row's switch and the requests behind it. Clicks made while a request for the same workflow
 * is under way are queued, not raced: the switch shows the user's latest choice at once, one
 * request runs at a time, and when it settles one more is sent if the service still differs.
 */
export interface Switch {
  /** What the service last confirmed. */
  active: boolean;
  /** What the switch shows: the user's latest choice. */
  wanted: boolean;
  /** A request for this workflow is under way. */
  busy?: boolean;
}

/** The user moved the switch: it shows `on` from now. Answers whether a request should start (none is under way). */
export const choose = (row: Switch, on: boolean): boolean => {
  row.wanted = on;
  return !row.busy;
};

/** A request the service refused: the switch is back where the service stands. */
export interface SwitchFailure {
  /** Where the refused request tried to move the switch. */
  on: boolean;
  error: unknown;
}

/**
 * Brings the service to where the switch stands, one request at a time: `send` asks the service
 * to move it, `confirmed` hears each move it confirmed. Clicks made meanwhile only move the
 * switch; the loop sends whatever still differs once a request settles. Once `signal` aborts
 * (the element was removed) nothing here touches the row again.
 */
export async function syncSwitch(
  row: Switch,
  send: (on: boolean) => Promise<unknown>,
  confirmed: (on: boolean) => void,
  signal: AbortSignal,
): Promise<SwitchFailure | undefined> {
  row.busy = true;
  let on = row.wanted;
  let failure: SwitchFailure | undefined;
  try {
    while (row.wanted !== row.active) {
      on = row.wanted;
      await send(on);
      if (signal.aborted) return;
      row.active = on;
      confirmed(on);
    }
  } catch (error) {
    if (signal.aborted) return;
    row.wanted = row.active;
    failure = { on, error };
  }
  row.busy = false;
  return failure;
}
