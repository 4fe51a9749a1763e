// acpmux approval page: questions (the agent's ACP elicitation/create,
// https://agentclientprotocol.com/protocol/v1/elicitation), shown as a form
// (mode "form") or a link (mode "url") and answered through the decisions
// API, so that a refused field comes back as a 400 naming it, is shown next
// to the field, and the user may try again (docs/decisions.md, "Questions").
// As in app.js, every string from the agent is set with textContent (via
// el/visible), never parsed as HTML.
'use strict';

// A single select with at most this many members is shown as buttons,
// a longer one as a <select>.
const maxChoiceButtons = 4;

// enumOptions returns the members [{value, label}] of a select property:
// a string's enum (with enumNames) or oneOf, an array's items.enum or
// items.anyOf; null when the property is not a select.
function enumOptions(prop) {
  const titled = (list) => list.map((o) => ({ value: String(o.const), label: o.title || String(o.const) }));
  const plain = (list, names) => list.map((v, i) => ({ value: String(v), label: (names && names[i]) || String(v) }));
  if (prop.type === 'array') {
    const it = prop.items || {};
    if (Array.isArray(it.enum)) return plain(it.enum);
    if (Array.isArray(it.anyOf)) return titled(it.anyOf);
    return [];
  }
  if (Array.isArray(prop.enum)) return plain(prop.enum, prop.enumNames);
  if (Array.isArray(prop.oneOf)) return titled(prop.oneOf);
  return null;
}

// fieldOf builds the input of one property. It returns {el, value}, where
// value() is the member's answer value or undefined (left empty: omitted).
function fieldOf(name, prop, id) {
  const opts = enumOptions(prop);
  const def = prop.default;
  if (prop.type === 'boolean') {
    const box = el('input', '');
    box.type = 'checkbox';
    box.id = id;
    box.checked = def === true;
    return { el: box, value: () => box.checked, label: true };
  }
  if (prop.type === 'array') {
    const wrap = el('div', 'choices multi');
    const boxes = [];
    for (const o of opts) {
      const lab = el('label', 'choice');
      const box = el('input', '');
      box.type = 'checkbox';
      box.value = o.value;
      box.checked = Array.isArray(def) && def.includes(o.value);
      lab.append(box, ' ');
      visible(lab, o.label);
      boxes.push(box);
      wrap.append(lab);
    }
    return { el: wrap, value: () => { const v = boxes.filter((b) => b.checked).map((b) => b.value); return v.length ? v : undefined; } };
  }
  if (opts && opts.length <= maxChoiceButtons) {
    const wrap = el('div', 'choices');
    let chosen = typeof def === 'string' ? def : undefined;
    const buttons = [];
    for (const o of opts) {
      const b = el('button', 'choice', o.label);
      b.type = 'button';
      b.dataset.value = o.value;
      b.setAttribute('aria-pressed', String(o.value === chosen));
      b.addEventListener('click', () => {
        chosen = chosen === o.value && !prop.required ? undefined : o.value;
        for (const x of buttons) x.setAttribute('aria-pressed', String(x.dataset.value === chosen));
      });
      buttons.push(b);
      wrap.append(b);
    }
    return { el: wrap, value: () => chosen, buttons };
  }
  if (opts) {
    const sel = el('select', '');
    sel.id = id;
    const none = el('option', '', '—');
    none.value = '';
    sel.append(none);
    for (const o of opts) {
      const op = el('option', '', o.label);
      op.value = o.value;
      sel.append(op);
    }
    if (typeof def === 'string') sel.value = def;
    return { el: sel, value: () => (sel.value === '' ? undefined : sel.value) };
  }
  const input = el('input', '');
  input.id = id;
  if (prop.type === 'number' || prop.type === 'integer') {
    input.type = 'number';
    input.step = prop.type === 'integer' ? '1' : 'any';
    input.inputMode = prop.type === 'integer' ? 'numeric' : 'decimal';
    if (typeof def === 'number') input.value = String(def);
    // Not a number: sent as the text, so that acpmux names the field.
    return { el: input, value: () => (input.value === '' ? undefined : (Number.isFinite(Number(input.value)) ? Number(input.value) : input.value)) };
  }
  input.type = { email: 'email', uri: 'url', date: 'date' }[prop.format] || 'text';
  if (typeof def === 'string') input.value = def;
  return { el: input, value: () => (input.value === '' ? undefined : input.value) };
}

// onQuestion shows the agent's elicitation/create (JSON-RPC id, params)
// as a card: the message, then the form or the link, then the answer
// buttons accept, decline and cancel.
function onQuestion(id, params) {
  const meta = (params._meta && params._meta.acpmux) || {};
  const did = meta.decisionId || ('request-' + JSON.stringify(id));
  byRequest.set(JSON.stringify(id), did);
  const sid = params.sessionId;
  const card = el('div', 'card open question');
  card.dataset.decisionId = did;
  card.append(el('div', 'title', params.message || 'The agent asks a question'));
  card.append(el('div', 'meta', 'question · session ' + sid));
  for (const w of meta.warnings || []) card.append(el('div', 'warning', '⚠ ' + w));
  const fields = new Map(); // property name -> {value, errEl}
  const general = el('div', 'error');
  let n = 0;
  if (params.mode === 'url') {
    let origin = '';
    let safe = false;
    try {
      const u = new URL(params.url);
      origin = u.origin;
      safe = u.protocol === 'https:' || u.protocol === 'http:';
    } catch { /* shown as text only */ }
    card.append(el('div', 'origin', origin || 'not a valid URL'));
    card.append(el('pre', 'url', params.url));
    if (safe) {
      // Opened only when the user clicks it: a plain link, new tab, no
      // opener, no referrer.
      const a = el('a', 'open-link', 'Open ' + origin);
      a.href = params.url;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      card.append(a);
    }
  } else {
    const schema = params.requestedSchema || {};
    if (schema.title) card.append(el('div', 'schema-title', schema.title));
    if (schema.description) card.append(el('div', 'meta', schema.description));
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const [name, prop0] of Object.entries(schema.properties || {})) {
      const prop = Object.assign({}, prop0, { required: required.has(name) });
      const fid = 'q' + (nextFieldID++);
      const box = el('div', 'field');
      box.dataset.field = name;
      const f = fieldOf(name, prop, fid);
      const label = el('label', 'label');
      if (!f.buttons && prop.type !== 'array') label.htmlFor = fid;
      visible(label, prop.title || name);
      if (prop.required) {
        const req = el('span', 'req', ' *');
        req.title = 'required';
        label.append(req);
      }
      if (f.label) {
        const row = el('div', 'check');
        row.append(f.el, label);
        box.append(row);
      } else {
        box.append(label);
      }
      if (prop.description) box.append(el('div', 'hint', prop.description));
      if (!f.label) box.append(f.el);
      const errEl = el('div', 'error');
      errEl.setAttribute('role', 'alert');
      box.append(errEl);
      card.append(box);
      fields.set(name, { value: f.value, errEl });
      n++;
    }
    if (required.size > 0) card.append(el('div', 'meta', '* required'));
  }
  card.append(general);
  const opts = el('div', 'options');
  const buttons = [];
  const stateEl = el('div', 'state');
  const clearErrors = () => {
    general.textContent = '';
    for (const f of fields.values()) f.errEl.textContent = '';
  };
  for (const [action, label] of [['accept', params.mode === 'url' ? 'Done' : 'Submit'], ['decline', 'Decline'], ['cancel', 'Cancel']]) {
    const b = el('button', action, label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', async () => {
      clearErrors();
      const body = { action };
      if (action === 'accept' && params.mode !== 'url') {
        body.content = {};
        for (const [name, f] of fields) {
          const v = f.value();
          if (v !== undefined) body.content[name] = v;
        }
      }
      for (const x of buttons) x.disabled = true;
      stateEl.className = 'state';
      stateEl.textContent = 'Sending ' + action + ' …';
      const c = cards.get(did);
      const res = await answerQuestion(sid, did, body);
      if (!c.open) return; // closed meanwhile: the card says how
      if (res.ok) {
        stateEl.textContent = 'Sent: ' + action;
        return;
      }
      if (res.status === 409) {
        const v = res.body.decision || {};
        closeCard(did, 'Closed: ' + (v.status || 'conflict') + (v.resolvedBy ? ' by ' + v.resolvedBy : ''), 'closed');
        return;
      }
      stateEl.textContent = '';
      const e = res.body.error || {};
      const field = typeof e.field === 'string' && e.field.startsWith('content.') ? fields.get(e.field.slice('content.'.length)) : undefined;
      const msg = e.reason || e.message || ('HTTP ' + res.status);
      visible(field ? field.errEl : general, msg);
      for (const x of buttons) x.disabled = false;
    });
    buttons.push(b);
    opts.append(b);
  }
  card.append(opts);
  card.append(stateEl);
  $('pending-all').append(card);
  cards.set(did, { el: card, buttons, stateEl, open: true, question: true, fields: n });
  refreshPendingCount();
}

let nextFieldID = 1;

// answerQuestion posts body to the decisions API (the page's cookie is the
// token) and returns {ok, status, body}.
async function answerQuestion(sid, did, body) {
  try {
    const r = await fetch('/v1/sessions/' + encodeURIComponent(sid) + '/decisions/' + encodeURIComponent(did), {
      method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    let parsed = {};
    try { parsed = await r.json(); } catch { /* not JSON */ }
    return { ok: r.ok, status: r.status, body: parsed };
  } catch (err) {
    return { ok: false, status: 0, body: { error: { message: 'network error: ' + err } } };
  }
}
