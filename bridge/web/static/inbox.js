// acpmux approval page, shared store (docs/inbox.md): the pending
// confirmations of other bridges (and, in acpmux inbox, of every bridge),
// read and answered through the decisions API, grouped by bridge and
// session. Loaded after app.js, whose helpers (el, visible, cards,
// refreshPendingCount) it uses. Every string is shown with textContent.
'use strict';

const groups = new Map(); // bridgeId + '\n' + sessionId -> element

// group returns the box of one bridge's session, creating the bridge's
// heading and the session's box when new.
function group(bridge, sid) {
  const key = bridge.id + '\n' + sid;
  let g = groups.get(key);
  if (g) return g;
  $('bridges').hidden = false;
  let b = document.getElementById('bridge-' + bridge.id);
  if (!b) {
    b = el('div', 'bridge');
    b.id = 'bridge-' + bridge.id;
    b.append(el('h3', '', (bridge.name || bridge.id) + (bridge.host ? ' @ ' + bridge.host : '')));
    b.append(el('div', 'meta', (bridge.agent || []).join(' ') + (bridge.cwd ? ' · ' + bridge.cwd : '')));
    $('bridges').append(b);
  }
  g = el('div', 'session');
  g.append(el('h4', '', 'Session ' + sid));
  b.append(g);
  groups.set(key, g);
  return g;
}

// apiPath is the decisions route of session sid of bridge bid.
function apiPath(sid, bid, did) {
  return '/v1/sessions/' + encodeURIComponent(sid) + '/decisions' + (did ? '/' + encodeURIComponent(did) : '') +
    '?bridge=' + encodeURIComponent(bid);
}

// remoteCard shows decision v of bridge b with exactly its options; a
// click posts the optionId. An observer (docs/tokens.md) gets no buttons,
// only the notice that they cannot answer.
function remoteCard(b, v) {
  const card = el('div', 'card open');
  card.dataset.decisionId = v.id;
  card.dataset.bridgeId = b.id;
  card.append(el('div', 'title', v.title || 'Permission requested'));
  for (const w of v.warnings || []) card.append(el('div', 'warning', '⚠ ' + w));
  if (v.command) {
    const p = el('div', '');
    if (v.classification) p.append(el('span', 'class ' + v.classification.class, v.classification.class), ' ');
    p.append('command:');
    card.append(p, el('pre', 'command', v.command));
  }
  const opts = el('div', 'options');
  const buttons = [];
  const stateEl = el('div', 'state');
  const observer = me && me.role === 'observer'; // app.js
  if (observer) opts.append(el('div', 'observer', 'You are an observer: you see this request but cannot answer it.'));
  for (const o of observer ? [] : v.options || []) {
    const btn = el('button', o.kind, o.name);
    btn.type = 'button';
    btn.title = o.optionId;
    btn.addEventListener('click', async () => {
      for (const x of buttons) x.disabled = true;
      stateEl.textContent = '';
      visible(stateEl, 'Sent: ' + o.name + ' …');
      let r, body = {};
      try {
        r = await fetch(apiPath(v.sessionId, b.id, v.id), { method: 'POST', credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ optionId: o.optionId }) });
        body = await r.json();
      } catch { for (const x of buttons) x.disabled = false; return; }
      if (r.ok) closeCard(v.id, 'Answered: ' + o.optionId, 'answered');
      else closeCard(v.id, 'Not answered: ' + ((body.error && body.error.message) || r.status), 'closed');
    });
    buttons.push(btn);
    opts.append(btn);
  }
  card.append(opts, stateEl);
  group(b, v.sessionId).append(card);
  cards.set(v.id, { el: card, buttons, stateEl, open: true, remote: true });
  refreshPendingCount();
}

// refreshRemote lists the open decisions of every session of another
// bridge and adds their cards; a card whose decision is no longer open
// closes.
async function refreshRemote(list, own) {
  const open = new Set();
  const others = list.filter((s) => s.bridge && s.bridge.id !== own).length;
  // The inbox (no bridge of its own) lists every bridge: not "other" ones.
  const heading = own ? 'Other bridges' : 'Bridges';
  $('bridges').querySelector('h2').textContent = heading;
  if (others) {
    $('no-sessions').textContent = (own ? 'No session of this bridge yet. ' : '') +
      others + (others === 1 ? ' session' : ' sessions') + ' of ' + (own ? 'other bridges' : 'the bridges sharing the store') +
      ': their pending confirmations are listed under "' + heading + '".';
  }
  for (const s of list) {
    if (!s.bridge || s.bridge.id === own || !s.openDecisions) continue;
    let vs;
    try {
      const r = await fetch(apiPath(s.sessionId, s.bridge.id) + '&status=open', { credentials: 'same-origin' });
      if (!r.ok) continue;
      vs = (await r.json()).decisions || [];
    } catch { continue; }
    for (const v of vs) {
      open.add(v.id);
      if (!cards.has(v.id)) remoteCard(s.bridge, v);
    }
  }
  for (const [did, c] of cards) if (c.remote && c.open && !open.has(did)) closeCard(did, 'Closed', 'closed');
}
