//! The page's one inline script and its stylesheet (the script is allowed by its hash in the
//! page's Content-Security-Policy).

/// The page's one script: opens the `<details>` a link (e.g. a chart point) points to.
pub(super) const SCRIPT: &str =
    "(function(){function o(){var h=decodeURIComponent(location.hash.slice(1));if(!h)return;\
var e=document.getElementById(h);var t=e;while(e){if(e.tagName==='DETAILS')e.open=true;e=e.parentElement;}\
if(t)t.scrollIntoView();}window.addEventListener('hashchange',o);o();})();";

pub(super) const STYLE: &str = r#"
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px 32px;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.muted{color:var(--muted)}
dl.header{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.header dt{color:var(--muted)}dl.header dd{margin:0}
.callout{background:#fff8e5;border:1px solid #f0d78c;border-radius:6px;padding:8px 12px;margin:10px 0}
.na{background:var(--soft);border:1px dashed #adb5bd;border-radius:6px;padding:8px 12px;margin:8px 0;color:var(--muted)}
ul.notes{margin:6px 0;padding-left:20px}
figure.chart{margin:12px 0 20px}
figure.chart figcaption{font-weight:600;margin-bottom:4px}
svg{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}
svg .axis{stroke:#57606a;stroke-width:1}
svg .grid{stroke:#eaeef2;stroke-width:1}
svg .series{fill:none;stroke-width:2;pointer-events:none}
svg .provider{fill:none;stroke:#24292f;stroke-width:1.5;stroke-dasharray:5 4;pointer-events:none}
svg .hover{fill:transparent}
svg .hover:hover{fill:rgba(9,105,218,.08)}
svg .decision line{stroke-width:1;stroke-dasharray:3 3}
svg text.lab{fill:#57606a}
ul.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 18px}
ul.legend li{display:flex;align-items:center;gap:6px}
svg.sw{display:inline-block;vertical-align:middle;width:30px;height:12px}
svg .mk{pointer-events:auto}
svg .provider-mk{fill:#fff;stroke:#24292f;stroke-width:1.2}
.same-as{color:var(--muted);font-style:italic}
table{border-collapse:collapse;margin:6px 0}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
details.turn{border:1px solid var(--line);border-radius:6px;margin:4px 0;padding:2px 10px}
details.turn>summary{cursor:pointer;padding:4px 0}
details.turn[open]>summary{border-bottom:1px solid var(--line);margin-bottom:6px}
section.tv{margin:6px 0 12px}
tr.same td{color:var(--muted)}
tr.changed td:first-child{border-left:3px solid #bf8700}
tr.added td:first-child{border-left:3px solid #1a7f37}
pre.text{white-space:pre-wrap;word-break:break-word;background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:6px 8px;margin:4px 0;max-height:360px;overflow:auto;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.capped{color:#9a6700;font-size:12px}
.removed{color:#cf222e}
.v-ok{color:#1a7f37}.v-warning{color:#9a6700}.v-error{color:#cf222e}.v-none{color:var(--muted)}
svg .rbreak line{stroke:#bc4c00;stroke-width:1.5;stroke-dasharray:1 3}
.rbreak{color:#bc4c00;font-weight:600}.rbreak-detail{color:#bc4c00}
"#;
