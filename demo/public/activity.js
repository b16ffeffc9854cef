// The Activity panel: the signed-in user's recent workflow runs and their errors, from the demo
// backend's /demo/activity (it reads the service with the API key, which never reaches this
// page), and buttons that make the backend POST a sample event to a workflow's webhook (whose URL
// also stays on the server). Everything from the service goes in as text, never as markup.

const flows = document.getElementById('activity-flows');
const announcer = document.getElementById('activity-status');
const webhookNote = document.getElementById('error-webhook');

/** The last outcome of a test event per workflow, shown under its buttons. */
const notes = new Map();
/** The run a test event just made, marked as new once. */
let arrived = null;
/** Only the newest refresh may draw: an older answer that comes late is dropped. */
let generation = 0;

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateAndClock = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const OUTCOMES = { finished: 'Finished', stopped: 'Finished early', failed: 'Failed' };
const STEP_STATES = { done: 'ran', failed: 'failed', 'not-run': 'did not run' };

/** Builds an element: `el('p', {className: 'x'}, 'text', child)`. */
function el(tag, properties = {}, ...children) {
  const element = Object.assign(document.createElement(tag), properties);
  element.append(...children.filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

function timeElement(iso) {
  const date = new Date(iso);
  const today = date.toDateString() === new Date().toDateString();
  return el('time', { dateTime: iso, title: dateAndClock.format(date) }, (today ? clock : dateAndClock).format(date));
}

const duration = (ms) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

function announce(text) {
  announcer.textContent = text;
}

async function refresh() {
  const mine = ++generation;
  flows.setAttribute('aria-busy', 'true');
  try {
    const response = await fetch('/demo/activity', { headers: { Accept: 'application/json' } });
    const body = await response.json().catch(() => ({}));
    if (mine !== generation) return;
    if (!response.ok) throw new Error(body.message ?? `The demo server answered ${response.status}.`);
    render(body);
  } catch (error) {
    if (mine !== generation) return;
    const reason =
      error instanceof TypeError ? 'the demo server did not answer; is npm start still running?' : error.message;
    flows.replaceChildren(
      el('p', { className: 'activity-empty error' }, `Could not load the runs: ${reason} Refresh to try again.`),
    );
  } finally {
    if (mine === generation) flows.setAttribute('aria-busy', 'false');
  }
}

function render(view) {
  // The panel is drawn anew; keep where the visitor was (focus, opened outputs).
  const focused = document.activeElement?.dataset?.focusKey;
  const opened = new Set([...flows.querySelectorAll('details[open]')].map((d) => d.dataset.executionId));

  flows.replaceChildren(
    ...(view.workflows.length
      ? view.workflows.map((workflow) => renderWorkflow(workflow, opened))
      : [el('p', { className: 'activity-empty' }, 'No workflows yet. Turn one on above, and its runs show here.')]),
  );
  renderWebhookNote(view.errorWebhook);
  arrived = null;
  if (focused) flows.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
}

function renderWorkflow(workflow, opened) {
  const titleId = `flow-${workflow.workflowId}`;
  const icons = el('span', { className: 'flow-icons' });
  for (const icon of workflow.icons) {
    // Icons come from the Forge service; anything but an http(s) URL is not an icon.
    if (/^https?:/.test(icon.src)) icons.append(el('img', { src: icon.src, alt: '', width: 24, height: 24 }));
  }
  const head = el(
    'div',
    { className: 'flow-head' },
    icons,
    el(
      'div',
      { className: 'flow-title' },
      el('h3', { id: titleId }, workflow.name),
      el('p', {}, triggerText(workflow.trigger), !workflow.active && el('span', { className: 'badge' }, 'Off')),
    ),
    workflow.testEvent && renderActions(workflow, titleId),
  );
  const note = notes.get(workflow.workflowId);
  return el(
    'article',
    { className: 'flow' },
    head,
    note && el('p', { className: `flow-note ${note.kind}` }, note.text),
    workflow.runs.length
      ? el('ol', { className: 'runs' }, ...workflow.runs.map((run) => renderRun(run, opened)))
      : el('p', { className: 'runs-empty' }, emptyText(workflow)),
    (workflow.hasOlderRuns || workflow.errorCount > 0) && el('p', { className: 'flow-foot' }, footText(workflow)),
  );
}

function footText({ hasOlderRuns, runs, errorCount }) {
  const parts = [];
  if (hasOlderRuns) parts.push(`The ${runs.length} newest runs`);
  if (errorCount > 0) parts.push(`${errorCount} ${errorCount === 1 ? 'entry' : 'entries'} in the error log`);
  return parts.join(' · ');
}

function triggerText(trigger) {
  if (trigger?.kind === 'webhook') return `Runs on a webhook${trigger.event ? `: ${trigger.event}` : ''}`;
  if (trigger?.kind === 'schedule') return `Runs on a schedule: ${trigger.name} (${trigger.cron}, UTC)`;
  return 'Runs when triggered';
}

function emptyText(workflow) {
  if (workflow.testEvent) return 'No runs yet — send a test event.';
  if (workflow.trigger?.kind === 'schedule') return 'No runs yet — they show here when its schedule is due.';
  return 'No runs yet.';
}

function renderActions(workflow, titleId) {
  const send = (failing) => {
    const button = el(
      'button',
      {
        type: 'button',
        className: failing ? 'button small' : 'button small soft',
        title: `Send ${failing ? workflow.testEvent.failingWhy : workflow.testEvent.noun} to this workflow's webhook`,
      },
      failing ? 'Send an event that fails' : `Send ${workflow.testEvent.noun}`,
    );
    button.dataset.focusKey = `${workflow.workflowId}:${failing ? 'failing' : 'good'}`;
    // Both buttons of every workflow read alike; the workflow's name tells them apart.
    button.setAttribute('aria-describedby', titleId);
    button.addEventListener('click', () => sendTestEvent(workflow, failing, button));
    return button;
  };
  return el('div', { className: 'flow-actions' }, send(false), send(true));
}

async function sendTestEvent(workflow, failing, button) {
  // aria-disabled, not disabled: a disabled button drops the keyboard focus.
  const buttons = [...button.parentElement.querySelectorAll('button')];
  if (buttons.some((b) => b.getAttribute('aria-disabled') === 'true')) return;
  for (const b of buttons) b.setAttribute('aria-disabled', 'true');
  const label = button.textContent;
  button.textContent = 'Sending…';
  let note;
  try {
    const response = await fetch('/demo/test-event', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ workflowId: workflow.workflowId, failing }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message ?? `The demo server answered ${response.status}.`);
    arrived = body.executionId;
    note = body.finished
      ? { kind: 'ok', text: `Sent ${body.sent}. The run finished; it is the newest below.` }
      : { kind: 'failed', text: `Sent ${body.sent}. The run failed; its error is below.` };
  } catch (error) {
    const reason =
      error instanceof TypeError ? 'The demo server did not answer; is npm start still running?' : error.message;
    note = { kind: 'failed', text: reason };
  }
  notes.set(workflow.workflowId, note);
  announce(note.text);
  button.textContent = label;
  for (const b of buttons) b.removeAttribute('aria-disabled');
  // The list tells the same story as this panel: read its runs' health now, not at its next refresh.
  await Promise.all([refresh(), document.querySelector('forge-workflow-list')?.refresh()]);
}

document.getElementById('revoke-slack').addEventListener('click', async () => {
  const response = await fetch('/demo/revoke', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ integration: 'slack' }),
  }).catch(() => undefined);
  announce(
    response?.ok
      ? 'Slack access revoked: the next run that posts to Slack fails, and the list offers to reconnect Slack.'
      : 'The demo server could not revoke Slack access.',
  );
});

function renderRun(run, opened) {
  const item = el(
    'li',
    { className: `run ${run.outcome}${run.executionId === arrived ? ' arrived' : ''}` },
    el(
      'div',
      { className: 'run-line' },
      el('span', { className: 'outcome' }, OUTCOMES[run.outcome]),
      timeElement(run.startedAt),
      el('span', { className: 'duration' }, duration(run.durationMs)),
    ),
    el(
      'ol',
      { className: 'steps' },
      ...run.steps.map((step) =>
        el(
          'li',
          { className: `step ${step.status}` },
          step.name,
          el('span', { className: 'visually-hidden' }, `: ${STEP_STATES[step.status]}`),
        ),
      ),
    ),
  );
  if (run.outcome === 'stopped') {
    const last = run.steps.filter((s) => s.status === 'done').at(-1);
    item.append(
      el('p', { className: 'run-detail' }, `“${last?.name}” did not pass, so the blocks after it did not run.`),
    );
  }
  if (run.error) item.append(renderError(run.error));
  const outputs = run.steps.filter((s) => s.output !== null);
  if (outputs.length) {
    const details = el(
      'details',
      { open: opened.has(run.executionId) },
      el('summary', {}, 'Block outputs'),
      ...outputs.flatMap((s) => [el('h4', {}, s.name), el('pre', {}, s.output)]),
    );
    details.dataset.executionId = run.executionId;
    item.append(details);
  }
  return item;
}

function renderError(error) {
  return el(
    'div',
    { className: 'run-error' },
    el('p', { className: 'message' }, error.message),
    el('p', { className: 'meta' }, `Error log entry · block “${error.blockName}” (${error.blockType})`),
    error.deliveredAt
      ? el(
          'p',
          { className: 'meta delivered' },
          'Delivered to Orbit’s error webhook at ',
          timeElement(error.deliveredAt),
        )
      : el('p', { className: 'meta' }, 'Not delivered to this demo’s error webhook (yet)'),
  );
}

function renderWebhookNote(webhook) {
  webhookNote.hidden = false;
  if (webhook.isDemoReceiver) {
    const waiting = webhook.pending ? `, ${webhook.pending} waiting to be delivered` : '';
    const failing = webhook.lastError ? ` The last attempt failed: ${webhook.lastError}` : '';
    webhookNote.replaceChildren(
      'The service delivers every error log entry to Orbit’s error webhook, ',
      el('code', {}, 'POST /demo/error-webhook'),
      ` (set with PUT /settings): ${webhook.received} of yours received${waiting}.${failing}`,
    );
  } else if (webhook.url) {
    webhookNote.replaceChildren(
      'The service delivers error log entries to ',
      el('code', {}, webhook.url),
      ', not to this demo.',
    );
  } else {
    webhookNote.replaceChildren('No error webhook is set, so failed runs are not delivered anywhere.');
  }
}

document.getElementById('refresh-activity').addEventListener('click', refresh);
// What the elements change (a workflow turned on or off, installed, its settings saved) changes
// what runs: read again.
for (const name of ['forge-install', 'forge-toggle', 'forge-update']) document.addEventListener(name, refresh);
// Scheduled runs happen while the visitor is elsewhere; coming back shows them.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') refresh();
});
refresh();
