// acpmux approval page: an ACP host over the /acp WebSocket.
// Every string from the agent is shown with textContent (never innerHTML),
// and hidden characters (see `hidden`) are shown as visible escapes.
'use strict';

const $ = (id) => document.getElementById(id);
const sessions = new Map();   // sessionId -> {el, transcript, agentPara}
const cards = new Map();      // decisionId -> {el, requestId, buttons, stateEl}
const byRequest = new Map();  // our JSON-RPC request id (from acpmux) -> decisionId
const calls = new Map();      // our own request id -> {resolve, reject}
let ws = null;
let nextId = 1;
let me = null;                // the person of this page's token: {name, role} (GET /v1/capabilities)

// Characters a command or title could use to hide what it does, by Unicode
// property, the same set as hidden.Rune (confirm/hidden) in Go: controls, format
// characters (zero-width, bidi, tags, ...), every space but U+0020 and every
// separator, bidi and join controls, variation selectors, default-ignorable
// code points, noncharacters and U+2800 BRAILLE PATTERN BLANK. Tab and line
// feed are layout here and stay as they are.
const hidden = /(?![ \t\n])[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{White_Space}\p{Bidi_Control}\p{Join_Control}\p{Variation_Selector}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}\u2800]/gu;

// visible appends text to parent, with hidden characters as red \u{…} escapes.
function visible(parent, text) {
  text = String(text ?? '');
  let last = 0;
  for (const m of text.matchAll(hidden)) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    const esc = document.createElement('span');
    esc.className = 'esc';
    esc.textContent = '\\u{' + m[0].codePointAt(0).toString(16).padStart(4, '0') + '}';
    parent.append(esc);
    last = m.index + m[0].length;
  }
  if (last < text.length) parent.append(text.slice(last));
  return parent;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) visible(e, text);
  return e;
}

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function call(method, params) {
  const id = nextId++;
  send({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve, reject) => calls.set(id, { resolve, reject }));
}

function setStatus(text, cls) {
  const s = $('status');
  s.textContent = text;
  s.className = 'status ' + (cls || '');
}

function session(sid) {
  let s = sessions.get(sid);
  if (s) return s;
  $('no-sessions').hidden = true;
  const box = el('div', 'session');
  box.append(el('h3', '', 'Session ' + sid));
  const transcript = el('div', 'transcript');
  box.append(transcript);
  $('sessions').append(box);
  s = { el: box, transcript, agentPara: null, tools: new Map() };
  sessions.set(sid, s);
  return s;
}

function textOf(content) {
  if (!content) return '';
  if (content.type === 'text') return content.text;
  if (content.type === 'resource_link') return '[' + (content.name || content.uri) + ']';
  return '[' + content.type + ']';
}

function onUpdate(params) {
  const s = session(params.sessionId);
  const u = params.update || {};
  const t = s.transcript;
  switch (u.sessionUpdate) {
    case 'agent_message_chunk':
      if (!s.agentPara) { s.agentPara = el('div', 'agent'); t.append(s.agentPara); }
      visible(s.agentPara, textOf(u.content));
      break;
    case 'user_message_chunk':
      s.agentPara = null;
      t.append(el('div', 'user', textOf(u.content)));
      break;
    case 'tool_call':
    case 'tool_call_update': {
      // One line per tool call, updated in place (ACP: an update carries
      // only the fields that changed).
      let tc = s.tools.get(u.toolCallId);
      if (!tc) {
        s.agentPara = null;
        tc = { title: u.toolCallId, kind: 'other', status: 'pending', line: el('div', 'tool') };
        s.tools.set(u.toolCallId, tc);
        t.append(tc.line);
      }
      if (u.title) tc.title = u.title;
      if (u.kind) tc.kind = u.kind;
      if (u.status) tc.status = u.status;
      tc.line.textContent = '';
      visible(tc.line, '🔧 ' + tc.title + ' (' + tc.kind + ') ' + tc.status);
      break;
    }
    default:
      return;
  }
  t.scrollTop = t.scrollHeight;
}

// onBlocked adds a line to the session's transcript for a request the gate
// refused without asking anyone (_acpmux/blocked, docs/plan-mode.md).
function onBlocked(p) {
  const s = session(p.sessionId);
  s.agentPara = null;
  const what = p.route === 'deny' ? 'Denied by policy: ' : 'Blocked in plan mode: ';
  const line = visible(el('div', 'blocked'), '⛔ ' + what + (p.command || '') +
    (p.class ? ' (' + p.class + ')' : '') + (p.rule ? ' [' + p.rule + ']' : ''));
  s.transcript.append(line);
  s.transcript.scrollTop = s.transcript.scrollHeight;
}

function refreshPendingCount() {
  let n = 0;
  for (const c of cards.values()) if (c.open) n++;
  $('pending-count').textContent = String(n);
  $('no-pending').hidden = n > 0;
}

function onPermission(id, params) {
  const meta = (params._meta && params._meta.acpmux) || {};
  const tc = params.toolCall || {};
  const did = meta.decisionId || ('request-' + id);
  byRequest.set(JSON.stringify(id), did);
  const card = el('div', 'card open');
  card.dataset.decisionId = did;
  card.append(el('div', 'title', tc.title || tc.toolCallId || 'Permission requested'));
  card.append(el('div', 'meta', 'kind: ' + (tc.kind || 'other') + ' · session ' + params.sessionId));
  // acpmux puts each warning first in the content too; show it once.
  const warned = new Set((meta.warnings || []).map((w) => '⚠ ' + w));
  for (const w of meta.warnings || []) card.append(el('div', 'warning', '⚠ ' + w));
  const command = meta.command || (tc.rawInput && tc.rawInput.command);
  if (command !== undefined) {
    const p = el('div', '');
    if (meta.classification) p.append(el('span', 'class ' + meta.classification.class, meta.classification.class), ' ');
    p.append('command:');
    card.append(p);
    card.append(el('pre', 'command', Array.isArray(command) ? command.join(' ') : command));
  }
  for (const c of tc.content || []) {
    if (c.type === 'diff') {
      card.append(el('div', 'meta', 'diff ' + c.path));
      if (c.oldText != null) card.append(el('pre', 'old', c.oldText));
      card.append(el('pre', 'new', c.newText));
    } else if (c.type === 'content' && c.content && !(c.content.type === 'text' && warned.has(c.content.text))) {
      card.append(el('pre', '', textOf(c.content)));
    }
  }
  const opts = el('div', 'options');
  const buttons = [];
  for (const o of params.options || []) {
    const b = el('button', o.kind, o.name);
    b.type = 'button';
    b.title = o.optionId;
    b.addEventListener('click', () => {
      for (const x of buttons) x.disabled = true;
      send({ jsonrpc: '2.0', id, result: { outcome: { outcome: 'selected', optionId: o.optionId } } });
      stateEl.textContent = '';
      visible(stateEl, 'Sent: ' + o.name + ' …');
    });
    buttons.push(b);
    opts.append(b);
  }
  card.append(opts);
  const stateEl = el('div', 'state');
  card.append(stateEl);
  $('pending-all').append(card);
  cards.set(did, { el: card, buttons, stateEl, open: true });
  refreshPendingCount();
}

function closeCard(did, text, cls) {
  const c = cards.get(did);
  if (!c) return;
  c.open = false;
  for (const b of c.buttons) b.disabled = true;
  c.el.classList.remove('open');
  c.stateEl.className = 'state ' + cls;
  c.stateEl.textContent = text;
  refreshPendingCount();
}

function onResolved(p) {
  let by = p.resolvedBy ? ' by ' + p.resolvedBy : '';
  if (p.answeredBy) by = ' by ' + p.answeredBy + (p.resolvedBy ? ' (' + p.resolvedBy + ')' : '');
  switch (p.status) {
    case 'answered': closeCard(p.decisionId, 'Answered' + by + (p.optionId ? ': ' + p.optionId : ''), 'answered'); break;
    case 'timed_out': closeCard(p.decisionId, 'Timed out: the agent was refused' + (p.optionId ? ' (' + p.optionId + ')' : ''), 'closed'); break;
    default: closeCard(p.decisionId, 'Closed: ' + (p.status || '') + (p.reason ? ' (' + p.reason + ')' : ''), 'closed');
  }
}

function onMessage(ev) {
  let m;
  try { m = JSON.parse(ev.data); } catch { return; }
  if (m.method === undefined) {
    const c = calls.get(m.id);
    if (c) { calls.delete(m.id); m.error ? c.reject(m.error) : c.resolve(m.result); }
    return;
  }
  const isRequest = Object.prototype.hasOwnProperty.call(m, 'id');
  switch (m.method) {
    case 'session/update': onUpdate(m.params || {}); return;
    case 'session/request_permission': onPermission(m.id, m.params || {}); return;
    case 'elicitation/create': onQuestion(m.id, m.params || {}); return; // question.js
    case '$/cancel_request': {
      const did = byRequest.get(JSON.stringify((m.params || {}).requestId));
      if (did && cards.get(did) && cards.get(did).open) closeCard(did, 'Withdrawn', 'closed');
      return;
    }
    case '_acpmux/permission_resolved': onResolved(m.params || {}); return;
    case '_acpmux/blocked': onBlocked(m.params || {}); return;
  }
  if (isRequest) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'the acpmux page does not serve ' + m.method } });
}

// caps is GET /v1/capabilities: bridgeId names this bridge in a shared
// store; hostId "inbox" is acpmux inbox (no agent, no /acp).
let caps = {};
// whoAmI shows who the page's token authenticates (docs/tokens.md).
async function whoAmI() {
  try {
    const r = await fetch('/v1/capabilities', { credentials: 'same-origin' });
    if (!r.ok) return;
    const caps = await r.json();
    if (!caps.person) return;
    me = caps.person;
    $('who').textContent = '';
    visible($('who'), 'you: ' + me.name + ' (' + me.role + ')');
  } catch { /* shown on the next load */ }
}

// observe shows an observer the open decisions of sid without buttons
// (acpmux does not ask an observer), and closes the ones that closed.
async function observe(sid) {
  let list;
  try {
    const r = await fetch('/v1/sessions/' + encodeURIComponent(sid) + '/decisions', { credentials: 'same-origin' });
    if (!r.ok) return;
    list = (await r.json()).decisions || [];
  } catch { return; }
  for (const v of list) {
    const c = cards.get(v.id);
    if (!c && v.status === 'open') onView(v);
    else if (c && c.open && v.status !== 'open') {
      onResolved({ decisionId: v.id, status: v.status, optionId: v.answer && v.answer.optionId, resolvedBy: v.resolvedBy, answeredBy: v.answeredBy, reason: v.reason });
    }
  }
}

function onView(v) {
  const card = el('div', 'card open');
  card.dataset.decisionId = v.id;
  card.append(el('div', 'title', v.title || 'Permission requested'));
  card.append(el('div', 'meta', 'session ' + v.sessionId));
  for (const w of v.warnings || []) card.append(el('div', 'warning', '⚠ ' + w));
  if (v.command) card.append(el('pre', 'command', v.command));
  card.append(el('div', 'observer', 'You are an observer: you see this request but cannot answer it.'));
  const stateEl = el('div', 'state');
  card.append(stateEl);
  $('pending-all').append(card);
  cards.set(v.id, { el: card, buttons: [], stateEl, open: true });
  refreshPendingCount();
}

async function refreshSessions() {
  let list;
  try {
    const r = await fetch('/v1/sessions', { credentials: 'same-origin' });
    if (!r.ok) { setStatus('not authorized: open the link acpmux printed', 'down'); return; }
    list = (await r.json()).sessions || [];
  } catch { return; }
  if (typeof refreshRemote === 'function') refreshRemote(list, caps.bridgeId || ''); // inbox.js
  for (const s of list) {
    if (s.bridge && s.bridge.id !== caps.bridgeId) continue; // another bridge's: inbox.js
    if (me && me.role === 'observer') observe(s.sessionId);
    if (sessions.has(s.sessionId)) continue;
    session(s.sessionId);
    attach(s.sessionId);
  }
}

// attach joins the page to a session on the current connection: the whole
// history the first time, only what is still pending after a reconnect.
function attach(sid) {
  const s = sessions.get(sid);
  if (!ws || ws.readyState !== WebSocket.OPEN || s.attachedTo === ws) return;
  s.attachedTo = ws;
  const policy = s.seen ? 'pending_only' : 'full';
  s.seen = true;
  call('session/attach', { sessionId: sid, historyPolicy: policy }).catch(() => { s.attachedTo = null; });
}

function connect() {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  ws = new WebSocket(proto + '//' + location.host + '/acp', ['acp']);
  ws.addEventListener('message', onMessage);
  ws.addEventListener('open', async () => {
    setStatus('live', 'live');
    try {
      await call('initialize', { protocolVersion: 1, clientCapabilities: { elicitation: { form: {}, url: {} } }, clientInfo: { name: 'acpmux-web', version: '1' } });
    } catch { /* the agent may not be initialized yet; attach still works */ }
    for (const sid of sessions.keys()) attach(sid);
    refreshSessions();
  });
  ws.addEventListener('close', (ev) => {
    setStatus('disconnected (' + ev.code + (ev.reason ? ': ' + ev.reason : '') + '), retrying…', 'down');
    for (const [did, c] of cards) if (c.open && !c.remote) closeCard(did, 'Connection lost; it will be shown again if still open', 'closed');
    setTimeout(connect, 2000);
  });
}

(async () => {
  try { caps = await (await fetch('/v1/capabilities', { credentials: 'same-origin' })).json(); } catch { /* refreshSessions says so */ }
  await whoAmI();
  refreshSessions();
  setInterval(refreshSessions, caps.hostId === 'inbox' ? 1000 : 3000);
  if (caps.hostId === 'inbox') setStatus('inbox: every bridge of the store', 'live');
  else connect();
})();
