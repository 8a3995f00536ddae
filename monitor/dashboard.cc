// The dashboard page: the fleet table and live throughput / queue-depth charts, refreshed every
// second from /status.json by plain JavaScript (no external assets, so it works offline).
#include "monitor/http_monitor.h"

namespace hlox::monitor {

const std::string& DashboardHtml() {
  static const std::string page = R"HTML(<!doctype html>
<html><head><meta charset="utf-8"><title>hlox fleet</title>
<style>
body{font-family:system-ui,sans-serif;margin:20px;color:#222}
table{border-collapse:collapse;margin:10px 0}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}
.idle{color:#2a7}.busy{color:#c70}.draining{color:#57c}.lost{color:#c22}
canvas{border:1px solid #ccc;margin-right:16px}#summary span{margin-right:18px}
</style></head><body>
<h2>hlox fleet</h2>
<div id="summary">loading...</div>
<table id="workers"><thead><tr><th>worker</th><th>host</th><th>class</th><th>isa</th><th>cpu</th><th>state</th><th>done</th>
<th>failed</th><th>evals/s</th><th>heartbeat age</th><th>version</th></tr></thead><tbody></tbody></table>
<div><canvas id="tput" width="420" height="160"></canvas><canvas id="queue" width="420" height="160"></canvas></div>
<script>
const hist={t:[],q:[]};
function draw(id,data,label,color){const c=document.getElementById(id),g=c.getContext('2d');
 g.clearRect(0,0,c.width,c.height);const mx=Math.max(1,...data);g.fillStyle='#222';g.font='12px sans-serif';
 g.fillText(label+' (max '+mx.toFixed(1)+')',6,14);g.strokeStyle=color;g.lineWidth=2;g.beginPath();
 data.forEach((v,i)=>{const x=i*(c.width/120),y=c.height-6-(v/mx)*(c.height-26);i?g.lineTo(x,y):g.moveTo(x,y)});g.stroke();}
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]))}
async function tick(){try{const s=await (await fetch('/status.json',{cache:'no-store'})).json();
 const rows=s.workers.map(w=>`<tr class="worker" data-id="${esc(w.id)}"><td>${esc(w.id)}</td><td>${esc(w.host)}</td>`+
  `<td>${esc(w.hardware_class)}</td><td class="isa">${esc(w.isa||'')}</td><td>${esc(w.cpu||'')}</td>`+
  `<td class="${esc(w.state)}">${esc(w.state)}</td><td>${w.jobs_done}</td>`+
  `<td>${w.jobs_failed}</td><td>${(w.jobs_done/Math.max(w.uptime_s,1e-3)).toFixed(2)}</td>`+
  `<td>${w.last_heartbeat_age_s.toFixed(1)} s</td><td>${esc(w.version)}</td></tr>`).join('');
 document.querySelector('#workers tbody').innerHTML=rows;
 document.getElementById('summary').innerHTML=`<span>workers: ${s.workers.length}</span>`+
  `<span>pending: ${s.queues.pending}</span><span>in flight: ${s.queues.in_flight}</span>`+
  `<span>throughput: ${s.throughput_jobs_per_s.toFixed(1)} jobs/s</span>`+
  `<span>latency p50 ${s.latency_s.p50.toFixed(4)} s, p99 ${s.latency_s.p99.toFixed(4)} s</span>`;
 hist.t.push(s.throughput_jobs_per_s);hist.q.push(s.queues.pending+s.queues.in_flight);
 if(hist.t.length>120){hist.t.shift();hist.q.shift();}
 draw('tput',hist.t,'throughput, jobs/s','#1f77b4');draw('queue',hist.q,'queue depth','#ff7f0e');
}catch(e){document.getElementById('summary').textContent='broker unreachable: '+e;}}
tick();setInterval(tick,1000);
</script></body></html>
)HTML";
  return page;
}

}  // namespace hlox::monitor
