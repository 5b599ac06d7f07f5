'use strict';
// thermlog dashboard (first cut): the daemon status from /api/v1/status.
(async function main() {
  const msg = document.getElementById('message');
  try {
    const r = await fetch('api/v1/status');
    if (!r.ok) throw new Error('the daemon answered ' + r.status);
    const s = await r.json();
    const dl = document.getElementById('status-list');
    for (const [k, v] of Object.entries(s)) {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = typeof v === 'object' ? JSON.stringify(v) : String(v);
      dl.append(dt, dd);
    }
  } catch (e) {
    msg.textContent = 'Cannot reach the thermlog daemon: ' + e.message;
  }
})();
