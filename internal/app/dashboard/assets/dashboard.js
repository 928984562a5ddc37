// leakbench's live dashboard: feeds Chart.js the points the server sends
// (server-sent events: the history first, then one point a second), or,
// in an exported page, the points written into it.
'use strict';
(function () {
  const palette = ['#2b6cb0', '#c05621', '#2f855a', '#b83280', '#6b46c1', '#c53030', '#2c7a7b', '#975a16', '#4a5568'];
  const stateColors = { active: '#2f855a', idle: '#a0aec0', idle_in_tx: '#dd6b20', idle_in_tx_aborted: '#c53030', other: '#6b46c1' };
  let points = [];

  // chart makes a line chart over seconds since the start; right names
  // the datasets drawn against a second axis.
  function chart(id, labels, opts) {
    opts = opts || {};
    const datasets = labels.map((l, i) => ({
      label: l, data: [], borderColor: (opts.colors || palette)[i % palette.length],
      backgroundColor: (opts.colors || palette)[i % palette.length] + (opts.stacked ? 'aa' : '33'),
      fill: opts.stacked ? (i === 0 ? 'origin' : '-1') : false,
      yAxisID: (opts.right || []).includes(l) ? 'y1' : 'y', pointRadius: opts.points ? 3 : 0, borderWidth: 1.5, tension: 0,
    }));
    const scales = {
      x: { type: 'linear', title: { display: true, text: opts.xTitle || 's' }, ticks: { maxTicksLimit: 8 } },
      y: { beginAtZero: true, stacked: !!opts.stacked, title: { display: !!opts.yTitle, text: opts.yTitle || '' } },
    };
    if (opts.right) {
      scales.y1 = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: opts.rightTitle || '' } };
    }
    return new Chart(document.getElementById(id), {
      type: 'line', data: { datasets },
      options: { animation: false, parsing: false, normalized: true, maintainAspectRatio: false, spanGaps: true,
        interaction: { mode: 'index', intersect: false }, scales,
        // Decimation thins a time series of thousands of points to the
        // pixels it has; a curve of a few stages (opts.points) must never
        // lose one: a chart laid out while hidden has no width, and
        // decimation then cut a two-stage curve to one point.
        plugins: { legend: { labels: { boxWidth: 10 } }, decimation: { enabled: !opts.points, algorithm: 'min-max' } } },
    });
  }

  const charts = {
    load: chart('c-load', ['users', 'req/s'], { right: ['req/s'], yTitle: 'users', rightTitle: 'req/s' }),
    latency: chart('c-latency', ['p50', 'p95', 'p99'], { yTitle: 'ms' }),
    errors: chart('c-errors', [], {}),
    states: chart('c-states', ['active', 'idle', 'idle_in_tx', 'idle_in_tx_aborted', 'other'],
      { stacked: true, colors: Object.values(stateColors) }),
    held: chart('c-held', ['idle in tx', 'stuck', 'oldest hold (s)'], { right: ['oldest hold (s)'], rightTitle: 's' }),
    apps: chart('c-apps', [], {}),
    pool: chart('c-pool', ['pgbouncer waiting', 'pool acquired', 'pool total', 'pool max', 'pool waiting'], {}),
    gen: chart('c-gen', ['engine cores', 'machine busy', 'late p99 (ms)'], { right: ['late p99 (ms)'], rightTitle: 'ms' }),
  };

  // The command's own view (state.view): which command the page serves
  // decides what add draws besides the run's charts.
  let command = '', sideNames = new Set();
  function setCommand(state) {
    const v = state && state.view;
    command = (v && v.command) || '';
    // A sign-off's parts are its sides, then (with --capacity) the
    // searches' stages: only the sides get a column.
    sideNames = new Set(((v && v.sides) || []).map((s) => s.name));
    document.body.classList.toggle('probe', command === 'probe');
  }
  // A sign-off's sides: a column of charts each, made as a side's first
  // point arrives, its x the seconds since the side's start.
  let sideCharts = {};
  function sideChart(name) {
    if (sideCharts[name]) return sideCharts[name];
    const box = el('div', undefined, 'side');
    box.appendChild(el('h3', name));
    document.getElementById('sides').appendChild(box);
    const n = Object.keys(sideCharts).length;
    const mk = (key, caption) => {
      const f = el('figure'), d = el('div', undefined, 'plot'), c = el('canvas');
      c.id = `c-side-${n}-${key}`;
      f.appendChild(el('figcaption', caption));
      d.appendChild(c);
      f.appendChild(d);
      box.appendChild(f);
      return c.id;
    };
    const ids = [mk('load', 'users and requests per second'), mk('latency', 'latency of each second (ms)'), mk('held', 'idle in transaction and stuck')];
    sideCharts[name] = {
      load: chart(ids[0], ['users', 'req/s'], { right: ['req/s'], rightTitle: 'req/s' }),
      latency: chart(ids[1], ['p95', 'p99'], { yTitle: 'ms' }),
      held: chart(ids[2], ['idle in tx', 'stuck'], {}),
    };
    return sideCharts[name];
  }
  function addSide(p) {
    const c = sideChart(p.part), x = p.part_t || 0, l = p.load, db = p.db;
    if (l) {
      push(c.load, 'users', x, l.users);
      if (l.second) {
        push(c.load, 'req/s', x, l.second.req_per_second);
        push(c.latency, 'p95', x, l.second.p95_ms);
        push(c.latency, 'p99', x, l.second.p99_ms);
      }
    }
    if (db) {
      push(c.held, 'idle in tx', x, db.idle_in_tx);
      push(c.held, 'stuck', x, db.stuck);
    }
  }
  // A capacity search's curve: x the stage's load, redrawn from the
  // stages judged so far at each state.
  const curves = {
    rate: chart('c-curve-rate', [], { xTitle: 'load', points: true }),
    latency: chart('c-curve-latency', [], { xTitle: 'load', yTitle: 'ms', points: true }),
    pool: chart('c-curve-pool', [], { xTitle: 'load', points: true }),
  };

  // series returns the dataset labelled label, adding it if new.
  function series(c, label) {
    let d = c.data.datasets.find((s) => s.label === label);
    if (!d) {
      const col = palette[c.data.datasets.length % palette.length];
      d = { label, data: [], borderColor: col, backgroundColor: col + '33', fill: false, pointRadius: 0, borderWidth: 1.5, yAxisID: 'y' };
      c.data.datasets.push(d);
    }
    return d;
  }
  function push(c, label, x, y) {
    if (y !== undefined && y !== null) series(c, label).data.push({ x, y });
  }

  // add charts one point; prev is the point before it (for rates).
  function add(p, prev) {
    const x = p.t, l = p.load, db = p.db;
    if (p.part && command === 'signoff' && sideNames.has(p.part)) addSide(p);
    if (l) {
      push(charts.load, 'users', x, l.users);
      if (l.second) {
        push(charts.load, 'req/s', x, l.second.req_per_second);
        push(charts.latency, 'p50', x, l.second.p50_ms);
        push(charts.latency, 'p95', x, l.second.p95_ms);
        push(charts.latency, 'p99', x, l.second.p99_ms);
        push(charts.gen, 'engine cores', x, l.second.engine_cores);
        push(charts.gen, 'machine busy', x, l.second.machine_busy);
        push(charts.gen, 'late p99 (ms)', x, l.second.late_p99_ms);
      }
      const before = (prev && prev.load && prev.load.errors_by_kind) || {};
      const dt = prev ? Math.max(p.t - prev.t, 0.001) : 1;
      for (const [kind, n] of Object.entries(l.errors_by_kind || {})) {
        push(charts.errors, kind, x, Math.max(n - (before[kind] || 0), 0) / dt);
      }
      for (const d of charts.errors.data.datasets) {
        if (d.label !== 'dropped' && !(d.label in (l.errors_by_kind || {}))) d.data.push({ x, y: 0 });
      }
      if (prev && prev.load) push(charts.errors, 'dropped', x, Math.max(l.dropped - prev.load.dropped, 0) / dt);
    }
    if (db) {
      for (const k of Object.keys(stateColors)) push(charts.states, k, x, db.states[k]);
      push(charts.held, 'idle in tx', x, db.idle_in_tx);
      push(charts.held, 'stuck', x, db.stuck);
      push(charts.held, 'oldest hold (s)', x, db.oldest_hold_seconds);
      for (const a of db.apps || []) {
        push(charts.apps, a.name, x, a.active + a.idle + a.idle_in_tx + a.idle_in_tx_aborted + a.other);
      }
      if (db.pgbouncer) push(charts.pool, 'pgbouncer waiting', x, db.pgbouncer.waiting);
      if (db.pool) {
        push(charts.pool, 'pool acquired', x, db.pool.acquired);
        push(charts.pool, 'pool total', x, db.pool.total);
        push(charts.pool, 'pool max', x, db.pool.max);
        push(charts.pool, 'pool waiting', x, db.pool.waiting);
      }
    }
  }

  function redraw() {
    for (const c of Object.values(charts)) c.update('none');
    for (const s of Object.values(sideCharts)) for (const c of Object.values(s)) c.update('none');
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function fmt(v, digits) {
    if (v === undefined || v === null) return '–';
    return typeof v === 'number' ? v.toLocaleString(undefined, { maximumFractionDigits: digits === undefined ? 1 : digits }) : String(v);
  }
  function table(id, head, rows) {
    const t = document.getElementById(id);
    t.replaceChildren();
    const tr = el('tr');
    head.forEach((h) => tr.appendChild(el('th', h)));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el('tr');
      r.forEach((c) => {
        const td = el('td');
        if (c instanceof Node) td.appendChild(c);
        else if (c !== undefined) td.textContent = String(c);
        row.appendChild(td);
      });
      t.appendChild(row);
    }
  }

  // show fills the tiles and tables from the last point and the state.
  function show(state) {
    const p = points[points.length - 1] || {};
    const l = p.load || {}, s = l.second || {}, db = p.db;
    document.getElementById('title').textContent = 'leakbench — ' + (state.title || 'run');
    const tiles = [
      ['users', l.users], ['req/s', s.req_per_second], ['p95 ms (last s)', s.p95_ms], ['requests', l.requests],
      ['errors', l.failures, l.failures > 0], ['dropped', l.dropped, l.dropped > 0],
    ];
    if (db) {
      tiles.push(['idle in tx', db.idle_in_tx, db.idle_in_tx > 0], ['stuck', db.stuck, db.stuck > 0],
        ['oldest hold s', db.oldest_hold_seconds, db.stuck > 0], ['episodes', state.episodes],
        ['stuck episodes', state.stuck_episodes, state.stuck_episodes > 0]);
      if (db.pgbouncer) tiles.push(['pgbouncer waiting', db.pgbouncer.waiting, db.pgbouncer.exhausted]);
      if (db.pool) tiles.push(['pool waiting', db.pool.waiting, db.pool.waiting > 0]);
    }
    if (s.engine_cores !== undefined) tiles.push(['engine cores', s.engine_cores, false]);
    const box = document.getElementById('tiles');
    box.replaceChildren();
    for (const [name, v, bad] of tiles) {
      const t = el('div', undefined, 'tile' + (bad ? ' bad' : ''));
      t.appendChild(el('b', fmt(v)));
      t.appendChild(el('span', name));
      box.appendChild(t);
    }
    table('t-series', ['scenario', 'method', 'name', 'requests', 'errors', 'p50 ms', 'p95 ms', 'p99 ms'],
      (state.series || []).map((r) => [r.scenario, r.method, r.name || '', fmt(r.requests),
        Object.entries(r.failures || {}).map(([k, n]) => k + ' ' + n).join(', ') || '0',
        fmt(r.p50_ms, 2), fmt(r.p95_ms, 2), fmt(r.p99_ms, 2)]));
    table('t-apps', ['application', 'active', 'idle', 'pinned', 'total'],
      ((db && db.apps) || []).map((a) => [a.name, a.active, a.idle, a.idle_in_tx + a.idle_in_tx_aborted,
        a.active + a.idle + a.idle_in_tx + a.idle_in_tx_aborted + a.other]));
    table('t-culprits', ['query (fingerprint)', 'application', 'episodes', 'total hold s', 'longest hold s', 'requests that left them'],
      (state.culprits || []).map((c) => [c.fingerprint, c.application, c.episodes, fmt(c.total_hold_seconds), fmt(c.max_hold_seconds),
        leftByLink(state, c.fingerprint)]));
    showLeftBy(state);
    const o = document.getElementById('oldest');
    o.replaceChildren();
    if (state.oldest) {
      o.appendChild(el('span', `pid ${state.oldest.pid}, ${fmt(state.oldest.age_seconds)} s, ${state.oldest.application || '?'}: `));
      o.appendChild(el('code', state.oldest.fingerprint));
    } else {
      o.textContent = 'none';
    }
    const w = document.getElementById('warnings');
    w.replaceChildren();
    (state.warnings || []).forEach((x) => w.appendChild(el('div', `${x.source}: ${x.message} (${x.count}×)`)));
    if (!(state.warnings || []).length) w.textContent = 'none';
    showControl(state.control, state.done);
    showView(state.view);
    const rep = document.getElementById('report');
    rep.replaceChildren();
    if (state.report && !window.LEAKBENCH_EXPORT) {
      const a = el('a', 'the finished report');
      a.href = state.report;
      rep.appendChild(a);
    }
  }

  // The requests that left the stuck sessions (state.left_by): while
  // the run plays, the live join of the stuck episodes to the requests
  // sent so far; at its end, the forensics' join, which replaces it. A
  // culprit's cell sums its requests and links their rows.
  function leftByLink(state, fingerprint) {
    const mine = (state.left_by || []).filter((l) => l.fingerprint === fingerprint && l.request);
    if (!mine.length) return state.done ? 'none joined' : 'none joined yet';
    const kinds = {};
    for (const l of mine) {
      const k = `${l.request.method} ${l.request.name || ''} ${l.request.outcome}`.replace(/\s+/g, ' ');
      kinds[k] = (kinds[k] || 0) + 1;
    }
    const a = el('a', Object.entries(kinds).map(([k, n]) => `${k} ×${n}`).join(', '));
    a.href = '#t-leftby';
    return a;
  }
  function showLeftBy(state) {
    const rows = state.left_by || [];
    document.getElementById('left-by').hidden = !rows.length;
    table('t-leftby', ['run', 'query (fingerprint)', 'hold s', 'ended by', 'request', 'outcome', 'user', 'iteration', 'request s',
      'joined by', 'trace id'],
    rows.map((l) => {
      const r = l.request || {};
      return [l.run || '', l.fingerprint, fmt(l.hold_seconds), l.end_reason, l.request ? `${r.method} ${r.name || ''}` : 'not joined',
        r.outcome || '', r.user, r.iteration, fmt(r.seconds, 3), l.joined_by || '', l.trace_id || ''];
    }));
  }

  // showView fills the command's panel: a sign-off's sides, a capacity
  // search's stages and the limit that tripped, a soak's slopes.
  function showView(v) {
    // signoff --capacity: the searches after the sides, drawn as the
    // capacity command draws them, below the sides.
    const searches = (v && v.searches) || [];
    for (const k of ['signoff', 'capacity', 'soak']) {
      document.getElementById('v-' + k).hidden = !v || (v.command !== k && !(k === 'capacity' && searches.length));
    }
    if (!v) return;
    if (v.command === 'signoff') {
      table('t-sides', ['side', 's', 'requests', 'errors', 'peak users', 'peak req/s', 'p95 ms (last s)', 'peak idle in tx',
        'peak stuck', 'longest hold s', 'episodes', 'stuck episodes', 'peak pgbouncer waiting'],
      (v.sides || []).map((x) => [x.name + (x.name === v.part ? ' (playing)' : ''), fmt(x.seconds, 0), fmt(x.requests), fmt(x.failures),
        fmt(x.peak_users), fmt(x.peak_req_per_second), fmt(x.p95_ms), x.peak_idle_in_tx, x.peak_stuck, fmt(x.longest_hold_seconds),
        x.episodes, x.stuck_episodes, x.peak_pgbouncer_waiting]));
    }
    if (v.command === 'capacity' || searches.length) showCapacity(searches);
    if (v.command === 'soak' && v.soak) {
      const s = v.soak;
      document.getElementById('soak-phase').textContent = `phase: ${s.phase}; steady window so far ${fmt(s.steady_seconds, 0)} s ` +
        `(warm-up ${fmt(s.warmup_seconds, 0)} s left out; ${s.min_points} points needed to judge). The verdict at the end is the soak's own.`;
      table('t-slopes', ['resource', 'points', 'slope /hour', 'R²', 'threshold /hour', 'now', 'so far'],
        s.slopes.map((r) => [r.name, r.points, fmt(r.per_hour, 2), fmt(r.r2, 2), fmt(r.threshold_per_hour), fmt(r.last), r.growing ? 'growing' : 'flat']));
    }
  }
  function showCapacity(searches) {
    const head = document.getElementById('cap-head');
    head.replaceChildren();
    const sets = { rate: [], latency: [], pool: [] };
    const rows = [];
    searches.forEach((s, i) => {
      const line = el('div');
      const playing = s.playing ? `stage ${s.playing.index} playing: ${s.playing.load} ${s.unit || ''}` : '';
      line.appendChild(el('b', s.name + ': '));
      line.appendChild(el('span', s.headline || [`held ${s.capacity} ${s.unit || ''}`, playing].filter(Boolean).join('; ')));
      if (s.tripped) line.appendChild(el('span', ` — limit tripped at ${s.first_bad}: ${s.tripped}`, 'verdict bad'));
      head.appendChild(line);
      const col = palette[i % palette.length], col2 = palette[(i + 3) % palette.length];
      const ds = (label, color, f) => ({ label: `${s.name} ${label}`, borderColor: color, backgroundColor: color + '33', pointRadius: 3,
        borderWidth: 1.5, fill: false, yAxisID: 'y', data: s.stages.map((st) => ({ x: st.load, y: f(st) })).sort((a, b) => a.x - b.x) });
      sets.rate.push(ds('req/s', col, (st) => st.req_per_second));
      sets.latency.push(ds('p95', col, (st) => st.p95_ms), ds('p99', col2, (st) => st.p99_ms));
      sets.pool.push(ds('service connections', col, (st) => st.service_conns), ds('pgbouncer waiting', col2, (st) => st.pgbouncer_waiting));
      for (const st of s.stages) {
        const verdict = st.held ? 'held' : st.inconclusive ? 'inconclusive: ' + st.inconclusive : 'broke: ' + (st.trips || []).join('; ');
        rows.push([s.name, st.index, st.load, verdict, fmt(st.req_per_second), fmt(st.p95_ms), fmt(st.p99_ms),
          fmt(100 * st.error_rate, 2), st.service_conns, st.pool_max ? `${fmt(st.pool_peak)} / ${fmt(st.pool_max)}` : '–', st.pgbouncer_waiting]);
      }
    });
    for (const k of Object.keys(curves)) {
      curves[k].data.datasets = sets[k];
      curves[k].update('none');
    }
    table('t-stages', ['search', 'stage', 'load', 'verdict', 'req/s', 'p95 ms', 'p99 ms', 'errors %', 'service conns', 'pool peak / max', 'pgbouncer waiting'], rows);
  }

  // showControl draws the users' control once (so typing is not lost at
  // each tick) and the changes so far.
  let controlDrawn = false;
  function showControl(c, done) {
    const box = document.getElementById('control');
    if (!c) return;
    box.hidden = false;
    table('t-changes', ['elapsed s', 'scenario', 'from', 'to', 'by'],
      (c.changes || []).map((x) => [fmt(x.elapsed_seconds), x.scenario, x.from, x.to, x.by]));
    const form = document.getElementById('control-form');
    if (done || window.LEAKBENCH_EXPORT) {
      form.replaceChildren();
      return;
    }
    if (controlDrawn) return;
    controlDrawn = true;
    if (!c.allowed) {
      form.textContent = 'Control needs a token: start the run with --dashboard-token-file FILE.';
      return;
    }
    for (const sc of c.scenarios) {
      const row = el('div');
      const input = el('input');
      input.type = 'number'; input.min = '0'; input.max = String(sc.max_vus); input.value = String(sc.vus);
      const btn = el('button', 'set users');
      const msg = el('span');
      btn.onclick = async () => {
        const r = await fetch('scale', { method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ scenario: sc.name, vus: Number(input.value), by: 'page' }) });
        msg.textContent = r.ok ? '' : ' ' + (await r.text());
      };
      row.append(el('span', `${sc.name} (0 to ${sc.max_vus}): `), input, btn, msg);
      form.appendChild(row);
    }
  }

  function status(text) {
    document.getElementById('status').textContent = text;
  }

  // load replaces everything with a history: a reload or a reconnect
  // starts from the server's whole history, so nothing is counted twice.
  function load(h) {
    points = [];
    for (const c of Object.values(charts)) c.data.datasets.forEach((d) => { d.data = []; });
    for (const s of Object.values(sideCharts)) for (const c of Object.values(s)) c.destroy();
    sideCharts = {};
    document.getElementById('sides').replaceChildren();
    setCommand(h.state);
    for (const p of h.points) {
      add(p, points[points.length - 1]);
      points.push(p);
    }
    redraw();
    show(h.state);
  }

  // For tests and the console: how many points the page holds, the last one, the charts.
  window.leakbench = { points: () => points.length, last: () => points[points.length - 1], charts, sideCharts: () => sideCharts, curves };

  if (window.LEAKBENCH_EXPORT) {
    load(window.LEAKBENCH_EXPORT);
    status(`exported: ${points.length} points, ${window.LEAKBENCH_EXPORT.state.done ? 'the run had ended' : 'the run was still going'}`);
    return;
  }
  const es = new EventSource('events');
  es.addEventListener('history', (e) => {
    load(JSON.parse(e.data));
    status(`live: ${points.length} points`);
  });
  es.addEventListener('tick', (e) => {
    const m = JSON.parse(e.data);
    setCommand(m.state);
    add(m.point, points[points.length - 1]);
    points.push(m.point);
    redraw();
    show(m.state);
    status(`live: ${points.length} points`);
  });
  // state: the view changed with no point to carry it (a stage judged
  // between two stages' loads).
  es.addEventListener('state', (e) => show(JSON.parse(e.data)));
  es.addEventListener('done', (e) => {
    show(JSON.parse(e.data));
    status(`the run is over: ${points.length} points`);
    es.close();
  });
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED) status('reconnecting…');
  };
})();
