//! The report as a page: an empty shell that asks for the bearer token and fetches the
//! owner's findings as an HTML fragment. Findings are grouped by rule with counts, and
//! identical findings collapse into one row, so hundreds of them stay readable.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::report::{Finding, Report, RunReport};

/// Rows shown per rule; the rest are counted.
const ROWS_PER_RULE: usize = 50;

/// The page: no data of its own, only the form and the script that fetch the fragment.
pub const SHELL: &str = r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A2A client conformance report</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:80rem}table{border-collapse:collapse;width:100%;margin:.5rem 0}
td,th{border:1px solid #ccc;padding:.3rem .4rem;text-align:left;vertical-align:top}th{background:#f3f3f3}
.rule{font-family:monospace;color:#a00}.ok{color:#070}.count{text-align:right}details{margin:.4rem 0}summary{cursor:pointer}
form label{margin-right:1rem}</style></head><body>
<h1>A2A client conformance report</h1>
<form id="ask"><label>Bearer token <input id="token" type="password" autocomplete="off" size="40"></label>
<label>Run <input id="run" placeholder="all runs" size="20"></label><button type="submit">Show</button></form>
<p>The report shows the runs of your token's owner only. The token stays in this tab (session storage).</p>
<div id="report"></div>
<script>
const report = document.getElementById('report');
async function load() {
  const token = sessionStorage.getItem('a2a-conformance-token');
  if (!token) return;
  const run = document.getElementById('run').value.trim();
  const url = '/conformance/findings' + (run ? '?run=' + encodeURIComponent(run) : '');
  const answer = await fetch(url, {headers: {Authorization: 'Bearer ' + token}});
  if (answer.ok) {
    report.innerHTML = await answer.text();
  } else {
    report.textContent = answer.status === 401 ? 'The token was not accepted.' : 'The report could not be read (HTTP ' + answer.status + ').';
  }
}
document.getElementById('ask').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem('a2a-conformance-token', document.getElementById('token').value.trim());
  load();
});
load();
</script></body></html>"#;

/// The findings of the owner's runs, as HTML to put in the page.
pub fn fragment(report: &Report) -> String {
    let mut html = String::new();
    if report.runs.is_empty() {
        html.push_str(
            "<p class=\"ok\">No client requests recorded yet for this token's owner.</p>",
        );
    }
    for run in &report.runs {
        run_section(&mut html, run);
    }
    html
}

fn run_section(html: &mut String, run: &RunReport) {
    let _ = write!(
        html,
        "<section class=\"run\"><h2>{}</h2><p>{} requests, {} findings{}</p>",
        escape(&run.run),
        run.requests,
        run.findings.len(),
        if run.dropped_findings > 0 {
            format!(
                " ({} older findings dropped: the run holds the most it may)",
                run.dropped_findings
            )
        } else {
            String::new()
        }
    );
    if run.findings.is_empty() {
        html.push_str("<p class=\"ok\">No misbehaviour seen.</p>");
    } else {
        let mut by_rule: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for finding in &run.findings {
            by_rule.entry(&finding.rule).or_default().push(finding);
        }
        html.push_str("<table class=\"summary\"><tr><th>rule</th><th>findings</th><th>last seen</th><th>why it matters</th></tr>");
        for (rule, findings) in &by_rule {
            let last = findings.last().map(|f| f.at.as_str()).unwrap_or("");
            let why = findings.first().map(|f| f.why.as_str()).unwrap_or("");
            let _ = write!(
                html,
                "<tr class=\"rule-summary\"><td class=\"rule\">{}</td><td class=\"count\">{}</td><td>{}</td><td>{}</td></tr>",
                escape(rule),
                findings.len(),
                escape(last),
                escape(why)
            );
        }
        html.push_str("</table>");
        for (rule, findings) in &by_rule {
            rule_details(html, rule, findings);
        }
    }
    coverage_section(html, run);
    html.push_str("</section>");
}

/// One rule's findings, identical ones collapsed (same request, method, scenario and detail),
/// newest first.
fn rule_details(html: &mut String, rule: &str, findings: &[&Finding]) {
    let mut rows: Vec<(&Finding, usize)> = Vec::new();
    for finding in findings.iter().rev() {
        match rows.iter_mut().find(|(seen, _)| same(seen, finding)) {
            Some((_, times)) => *times += 1,
            None => rows.push((finding, 1)),
        }
    }
    let _ = write!(
        html,
        "<details class=\"rule-group\" data-rule=\"{0}\"><summary><span class=\"rule\">{0}</span>: {1} findings, {2} distinct</summary><table><tr><th>times</th><th>last at</th><th>request</th><th>binding</th><th>method</th><th>JSON-RPC id</th><th>request id</th><th>scenario</th><th>what</th></tr>",
        escape(rule),
        findings.len(),
        rows.len()
    );
    for (finding, times) in rows.iter().take(ROWS_PER_RULE) {
        let scenario = match (&finding.scenario, &finding.caused_by) {
            (Some(own), _) if finding.simulated => format!("{own} (simulated)"),
            (_, Some(cause)) => format!("after {cause}"),
            (Some(own), None) => own.clone(),
            (None, None) => "-".into(),
        };
        let _ = write!(
            html,
            "<tr class=\"finding\"><td class=\"count\">×{}</td><td>{}</td><td>{}</td><td class=\"binding\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            times,
            escape(&finding.at),
            escape(&finding.request),
            escape(&binding_and_wire(&finding.binding, &finding.wire)),
            escape(finding.method.as_deref().unwrap_or("-")),
            escape(finding.rpc_id.as_deref().unwrap_or("-")),
            escape(&finding.request_id),
            escape(&scenario),
            escape(&finding.detail)
        );
    }
    if rows.len() > ROWS_PER_RULE {
        let _ = write!(
            html,
            "<tr><td colspan=\"9\">and {} more distinct findings (the JSON report has them all)</td></tr>",
            rows.len() - ROWS_PER_RULE
        );
    }
    html.push_str("</table></details>");
}

fn same(a: &Finding, b: &Finding) -> bool {
    a.request == b.request
        && a.method == b.method
        && a.scenario == b.scenario
        && a.caused_by == b.caused_by
        && a.detail == b.detail
}

fn coverage_section(html: &mut String, run: &RunReport) {
    html.push_str("<h3>Coverage</h3>");
    if run.coverage.exercised.is_empty() {
        html.push_str("<p>No scenario exercised.</p>");
    } else {
        html.push_str("<table class=\"coverage\"><tr><th>scenario</th><th>method</th><th>binding</th><th>calls</th></tr>");
        for cell in &run.coverage.exercised {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td class=\"binding\">{}</td><td class=\"count\">{}</td></tr>",
                escape(&cell.scenario),
                escape(&cell.method),
                escape(&binding_and_wire(&cell.binding, &cell.wire)),
                cell.calls
            );
        }
        html.push_str("</table>");
    }
    if !run.coverage.untouched.is_empty() {
        let _ = write!(
            html,
            "<p class=\"untouched\">Never exercised: {}</p>",
            escape(&run.coverage.untouched.join(", "))
        );
    }
    for gap in &run.coverage.untouched_by_method {
        if !gap.scenarios.is_empty() {
            let _ = write!(
                html,
                "<p class=\"untouched-method\">Never tried on {} ({}): {}</p>",
                escape(&gap.method),
                escape(&binding_and_wire(&gap.binding, &gap.wire)),
                escape(&gap.scenarios.join(", "))
            );
        }
    }
}

/// How the page names the binding and wire of a call: `http+json 1.0`, `jsonrpc 0.3`; a card
/// fetch has neither (`-`).
pub(crate) fn binding_and_wire(binding: &str, wire: &str) -> String {
    match (binding, wire) {
        ("" | "-", "" | "-") => "-".into(),
        ("" | "-", wire) => wire.into(),
        (binding, "" | "-") => binding.into(),
        (binding, wire) => format!("{binding} {wire}"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
