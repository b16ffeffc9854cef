// The demo page's own behaviour: open the Slack setup, keep the list and the apps current after the modal
// saves, show every forge-* event as it fires, switch users and themes. Everything the page
// shows from event details goes in as text, never as markup.

// Every event either element fires, as the package's custom-elements.json lists them.
const manifest = await (await fetch('/custom-elements.json')).json();
const EVENTS = new Set(
  manifest.modules
    .flatMap((module) => module.declarations ?? [])
    .flatMap((element) => element.events ?? [])
    .map((event) => event.name),
);
const MAX_ENTRIES = 50;

const list = document.querySelector('forge-workflow-list');
const apps = document.querySelector('forge-integration-list');
const modal = document.querySelector('forge-config-modal');
const log = document.getElementById('events');
const empty = document.getElementById('events-empty');

document.getElementById('open-slack').addEventListener('click', () => modal.show());

// The list and the apps do not know about this separate modal, so they re-read after it saved;
// the list re-reads too when a disconnect in the apps switched workflows off.
for (const name of ['forge-install', 'forge-update']) {
  modal.addEventListener(name, () => Promise.all([list.refresh(), apps.refresh()]));
}
apps.addEventListener('forge-disconnect', () => list.refresh());

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function logEvent(event) {
  const item = document.createElement('li');
  item.className = event.type === 'forge-error' ? 'error' : '';
  const head = document.createElement('div');
  const name = document.createElement('code');
  name.textContent = event.type;
  const source = document.createElement('span');
  source.className = 'source';
  // Events are composed: the outermost element they passed through is the page's own element.
  source.textContent = `<${event.target.localName}>`;
  const when = document.createElement('time');
  when.textContent = time.format(new Date());
  head.append(name, when);
  item.append(head, source);
  if (event.detail && Object.keys(event.detail).length > 0) {
    const detail = document.createElement('pre');
    detail.textContent = JSON.stringify(event.detail, null, 1).replace(/\n\s*/g, ' ');
    item.append(detail);
  }
  log.prepend(item);
  while (log.children.length > MAX_ENTRIES) log.lastElementChild.remove();
  empty.hidden = true;
}
for (const name of EVENTS) document.addEventListener(name, logEvent);

document.getElementById('clear-events').addEventListener('click', () => {
  log.replaceChildren();
  empty.hidden = false;
});

// Switching user posts the form at once; the Switch button is there for when scripts are off.
const account = document.querySelector('form.account');
account.classList.add('auto');
account.querySelector('select').addEventListener('change', () => account.requestSubmit());

// Theme: "Auto" follows the system; Light/Dark pin the page and the elements (their `theme`).
const THEME_KEY = 'orbit-demo-theme';
function applyTheme(choice) {
  const pinned = choice === 'light' || choice === 'dark';
  if (pinned) document.documentElement.dataset.theme = choice;
  else delete document.documentElement.dataset.theme;
  for (const element of document.querySelectorAll('forge-workflow-list, forge-integration-list, forge-config-modal')) {
    if (pinned) element.setAttribute('theme', choice);
    else element.removeAttribute('theme');
  }
  for (const button of document.querySelectorAll('[data-theme-choice]')) {
    button.setAttribute('aria-pressed', String(button.dataset.themeChoice === (pinned ? choice : 'system')));
  }
}
for (const button of document.querySelectorAll('[data-theme-choice]')) {
  button.addEventListener('click', () => {
    localStorage.setItem(THEME_KEY, button.dataset.themeChoice);
    applyTheme(button.dataset.themeChoice);
  });
}
applyTheme(localStorage.getItem(THEME_KEY) ?? 'system');
