//! The report for a terminal and for CI: plain text, and JUnit XML (the Apache Ant schema
//! that CI systems render), with an allow-list of rules a run may break without failing.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::page::binding_and_wire;
use super::report::{Finding, Report, RunReport};
use super::rules::RULES;

/// Rules whose findings do not fail the check: one rule id a line, `#` starts a comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    rules: BTreeSet<String>,
}

impl AllowList {
    /// Reads the list; an unknown rule id is an error naming its line, so a typo does not
    /// silently allow nothing.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut rules = BTreeSet::new();
        for (number, line) in text.lines().enumerate() {
            let rule = line.split('#').next().unwrap_or_default().trim();
            if rule.is_empty() {
                continue;
            }
            if !RULES.iter().any(|known| known.id == rule) {
                return Err(format!(
                    "line {}: `{rule}` is not a rule; the rules are {}",
                    number + 1,
                    RULES.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
                ));
            }
            rules.insert(rule.to_string());
        }
        Ok(AllowList { rules })
    }

    /// Whether a finding of `rule` is allowed.
    pub fn allows(&self, rule: &str) -> bool {
        self.rules.contains(rule)
    }

    /// The findings of `report` that are not allowed.
    pub fn failing<'a>(&self, report: &'a Report) -> Vec<&'a Finding> {
        report
            .runs
            .iter()
            .flat_map(|run| &run.findings)
            .filter(|finding| !self.allows(&finding.rule))
            .collect()
    }
}

/// The report as text: per run, the findings grouped by rule with counts, then coverage.
pub fn text(report: &Report, allow: &AllowList) -> String {
    let mut out = String::new();
    if report.runs.is_empty() {
        out.push_str("No client requests recorded yet for this token's owner.\n");
    }
    for run in &report.runs {
        let _ = writeln!(
            out,
            "{}: {} requests, {} findings",
            run.run,
            run.requests,
            run.findings.len()
        );
        for rule in RULES {
            let findings: Vec<&Finding> =
                run.findings.iter().filter(|f| f.rule == rule.id).collect();
            if findings.is_empty() {
                continue;
            }
            let allowed = if allow.allows(rule.id) {
                " (allowed)"
            } else {
                ""
            };
            let _ = writeln!(out, "  [{}] {} findings{allowed}", rule.id, findings.len());
            let _ = writeln!(out, "      why: {}", rule.why);
            for finding in findings.iter().rev().take(5) {
                let _ = writeln!(out, "      {}", describe(finding));
            }
            if findings.len() > 5 {
                let _ = writeln!(out, "      … and {} earlier", findings.len() - 5);
            }
        }
        let exercised: Vec<String> = run
            .coverage
            .exercised
            .iter()
            .map(|e| {
                let over = binding_and_wire(&e.binding, &e.wire);
                format!("{} on {} ({over}) ×{}", e.scenario, e.method, e.calls)
            })
            .collect();
        let _ = writeln!(
            out,
            "  coverage: {}",
            if exercised.is_empty() {
                "no scenario exercised".to_string()
            } else {
                exercised.join("; ")
            }
        );
        if !run.coverage.untouched.is_empty() {
            let _ = writeln!(
                out,
                "  never exercised: {}",
                run.coverage.untouched.join(", ")
            );
        }
    }
    out
}

fn describe(finding: &Finding) -> String {
    let mut line = format!("{} {}", finding.at, finding.request);
    if let Some(method) = &finding.method {
        let _ = write!(line, " {method}");
    }
    let _ = write!(
        line,
        " ({})",
        binding_and_wire(&finding.binding, &finding.wire)
    );
    if let Some(id) = &finding.rpc_id {
        let _ = write!(line, " id={id}");
    }
    let _ = write!(line, " request-id={}", finding.request_id);
    if finding.simulated
        && let Some(scenario) = &finding.scenario
    {
        let _ = write!(line, " simulated={scenario}");
    }
    if let Some(cause) = &finding.caused_by {
        let _ = write!(line, " after={cause}");
    }
    let _ = write!(line, ": {}", finding.detail);
    line
}

/// The report as JUnit XML: one test suite per run, one test case per rule, failed when the
/// run has findings of a rule the allow-list does not allow.
pub fn junit(report: &Report, allow: &AllowList, hostname: &str, timestamp: &str) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (index, run) in report.runs.iter().enumerate() {
        suite(&mut out, index, run, allow, hostname, timestamp);
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite(
    out: &mut String,
    index: usize,
    run: &RunReport,
    allow: &AllowList,
    hostname: &str,
    timestamp: &str,
) {
    let failures = RULES
        .iter()
        .filter(|rule| !allow.allows(rule.id) && run.findings.iter().any(|f| f.rule == rule.id))
        .count();
    let _ = writeln!(
        out,
        "  <testsuite package=\"magisterium-a2a.conformance\" id=\"{index}\" name=\"{}\" timestamp=\"{}\" hostname=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"0\">",
        xml(&run.run),
        xml(timestamp),
        xml(hostname),
        RULES.len()
    );
    let _ = writeln!(
        out,
        "    <properties>\n      <property name=\"requests\" value=\"{}\"/>\n      <property name=\"untouched-scenarios\" value=\"{}\"/>\n    </properties>",
        run.requests,
        xml(&run.coverage.untouched.join(","))
    );
    for rule in RULES {
        let findings: Vec<&Finding> = run.findings.iter().filter(|f| f.rule == rule.id).collect();
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"conformance.{}\" time=\"0\"",
            rule.id,
            xml(&run.run)
        );
        if findings.is_empty() || allow.allows(rule.id) {
            out.push_str("/>\n");
            continue;
        }
        let mut text = format!("{}\n", rule.why);
        for finding in &findings {
            let _ = writeln!(text, "{}", describe(finding));
        }
        let _ = writeln!(
            out,
            ">\n      <failure message=\"{} findings\" type=\"{}\">{}</failure>\n    </testcase>",
            findings.len(),
            rule.id,
            xml(&text)
        );
    }
    out.push_str("    <system-out></system-out>\n    <system-err></system-err>\n  </testsuite>\n");
}

/// Text safe in XML content and attributes; characters XML 1.0 cannot carry are dropped.
fn xml(text: &str) -> String {
    text.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || *c >= ' ')
        .fold(String::new(), |mut out, c| {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&apos;"),
                other => out.push(other),
            }
            out
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allow_list_names_rules_and_refuses_typos() {
        let allow = AllowList::parse("# known\ncard-refetched-early  # our SDK\n\n").unwrap();
        assert!(allow.allows("card-refetched-early"));
        assert!(!allow.allows("content-type"));
        let error = AllowList::parse("content_type").unwrap_err();
        assert!(
            error.contains("line 1") && error.contains("content-type"),
            "{error}"
        );
    }

    #[test]
    fn xml_text_is_escaped_and_control_characters_dropped() {
        assert_eq!(xml("a<b>&\"'\u{1}c"), "a&lt;b&gt;&amp;&quot;&apos;c");
    }
}
