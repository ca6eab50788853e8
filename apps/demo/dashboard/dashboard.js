// The dashboard: polls /demo/state and renders it; each scenario button runs one failure boundary.

/** Counters shown at the top, in order: [field of /v1/stats, label]. */
const COUNTERS = [
  ['executed', 'executed'],
  ['replayed', 'replayed'],
  ['mismatches', 'key reused, other body'],
  ['in_progress_collisions', 'in-progress collisions'],
  ['released', 'released (5xx)'],
  ['outbox_unpublished', 'outbox unpublished'],
  ['events_consumed', 'invoice lines'],
  ['consumer_duplicates', 'consumer duplicates'],
];

const POLL_MS = 700;
let scenariosBuilt = false;
let running = null;

/** Creates an element with text, safely (nothing the service returns is parsed as HTML). */
function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function renderService(service) {
  const pill = document.getElementById('service');
  pill.dataset.state = service.state;
  const restarts = service.restarts === 1 ? '1 restart' : `${service.restarts} restarts`;
  pill.textContent =
    service.state === 'up'
      ? `service up · pid ${service.pid} · store ${service.store} · ${restarts}`
      : `service ${service.state} · ${restarts}`;
}

function renderCounters(stats) {
  const section = document.getElementById('counters');
  section.replaceChildren(
    ...COUNTERS.map(([field, label]) => {
      const box = element('div', undefined, 'counter');
      box.dataset.counter = field;
      box.append(element('b', stats ? stats[field] : '–'), element('span', label));
      return box;
    }),
  );
}

function buildScenarios(scenarios) {
  const list = document.getElementById('scenarios');
  list.replaceChildren(
    ...scenarios.map((scenario) => {
      const item = element('li', undefined, 'scenario');
      item.dataset.scenario = scenario.id;
      const actions = element('div', undefined, 'actions');
      const badge = element('span', '', 'badge');
      const button = element('button', 'Run');
      button.type = 'button';
      button.addEventListener('click', () => run(scenario.id));
      actions.append(badge, button);
      item.append(
        element('div', `${scenario.id}. ${scenario.title}`, 'title'),
        actions,
        element('p', `expected: ${scenario.expected}`, 'expected'),
        element('p', scenario.proves, 'proves'),
        element('p', '', 'observed'),
      );
      return item;
    }),
  );
  scenariosBuilt = true;
}

function renderScenarios(scenarios, runningId) {
  if (!scenariosBuilt) buildScenarios(scenarios);
  for (const scenario of scenarios) {
    const item = document.querySelector(`[data-scenario="${scenario.id}"]`);
    const badge = item.querySelector('.badge');
    const button = item.querySelector('button');
    button.disabled = runningId !== null;
    for (const old of item.querySelectorAll('.failure')) old.remove();
    if (runningId === scenario.id) {
      badge.dataset.result = 'RUNNING';
      badge.textContent = 'running…';
    } else if (scenario.result) {
      const { result } = scenario;
      badge.dataset.result = result.verdict;
      badge.textContent = result.verdict;
      item.querySelector('.observed').textContent = `observed (${result.attempts} attempts): ${result.observed}`;
      for (const failure of result.failures) item.append(element('p', failure, 'failure'));
    } else {
      delete badge.dataset.result;
      badge.textContent = '';
    }
  }
}

function renderRows(tableId, rows, cells) {
  const body = document.querySelector(`#${tableId} tbody`);
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = element('tr');
      for (const [text, className] of cells(row)) tr.append(element('td', text, className));
      return tr;
    }),
  );
}

function render(state) {
  renderService(state.service);
  const feed = state.feed;
  renderCounters(feed?.stats);
  renderScenarios(state.scenarios, running ?? state.running);
  if (!feed) return;
  renderRows('timeline', feed.timeline.slice(0, 18), (entry) => [
    [new Date(entry.at).toLocaleTimeString()],
    [entry.tenant ?? '–'],
    [entry.key_hash ?? '–'],
    [entry.status],
    [entry.outcome, `outcome-${entry.outcome}`],
  ]);
  renderRows('accounts', feed.accounts.slice(0, 12), (account) => [[account.tenant], [account.id], [account.balance], [account.payments]]);
  document.getElementById('broker').textContent =
    `broker: ${feed.broker.delivered} messages delivered, ${feed.broker.unacked} awaiting ack`;
}

async function refresh() {
  try {
    const response = await fetch('/demo/state', { cache: 'no-store' });
    if (response.ok) render(await response.json());
  } catch {
    // The host is restarting or gone: keep the last picture and try again.
  }
}

async function run(id) {
  running = id;
  await refresh();
  try {
    await fetch(`/demo/scenarios/${id}`, { method: 'POST' });
  } finally {
    running = null;
    await refresh();
  }
}

refresh();
setInterval(refresh, POLL_MS);
