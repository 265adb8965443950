//! JUnit-style XML (`--xunit-xml-output`), in the shape LLVM lit writes so CI dashboards read it.

use crate::discovery::TestFile;
use crate::runner::{ResultCode, TestResult};
use std::fmt::Write;
use std::time::Duration;

/// Renders the whole run as one `<testsuites>` document, one `<testsuite>` per suite name.
pub fn render(tests: &[TestFile], results: &[TestResult], elapsed: Duration) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(s, "<testsuites time=\"{:.2}\">", elapsed.as_secs_f64());
    let mut suites: Vec<&str> = tests.iter().map(|t| t.suite_name.as_str()).collect();
    suites.dedup();
    suites.sort();
    suites.dedup();
    for suite in suites {
        let members: Vec<(&TestFile, &TestResult)> = tests
            .iter()
            .zip(results)
            .filter(|(t, _)| t.suite_name == suite)
            .collect();
        let failures = members.iter().filter(|(_, r)| r.code.is_failure()).count();
        let skipped = members
            .iter()
            .filter(|(_, r)| r.code == ResultCode::Unsupported)
            .count();
        let time: f64 = members.iter().map(|(_, r)| r.elapsed.as_secs_f64()).sum();
        let _ = writeln!(
            s,
            "<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{time:.2}\">",
            escape(suite),
            members.len()
        );
        for (t, r) in members {
            let (dir, file) = match t.rel.rsplit_once('/') {
                Some((d, f)) => (d.replace('.', "_"), f),
                None => (String::new(), t.rel.as_str()),
            };
            let class = if dir.is_empty() {
                suite.to_string()
            } else {
                format!("{suite}.{dir}")
            };
            let _ = write!(
                s,
                "<testcase classname=\"{}\" name=\"{}\" time=\"{:.2}\"",
                escape(&class),
                escape(file),
                r.elapsed.as_secs_f64()
            );
            if r.code.is_failure() {
                let _ = writeln!(
                    s,
                    ">\n\t<failure><![CDATA[{}]]></failure>\n</testcase>",
                    cdata(&r.output)
                );
            } else if r.code == ResultCode::Unsupported {
                let _ = writeln!(
                    s,
                    ">\n\t<skipped message=\"{}\"/>\n</testcase>",
                    escape(r.output.trim())
                );
            } else {
                let _ = writeln!(s, "/>");
            }
        }
        let _ = writeln!(s, "</testsuite>");
    }
    s.push_str("</testsuites>\n");
    s
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Keeps text valid inside CDATA: splits any `]]>` and drops characters XML forbids.
fn cdata(s: &str) -> String {
    s.replace("]]>", "]]]]><![CDATA[>")
        .chars()
        .map(|c| {
            if (c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r' {
                '?'
            } else {
                c
            }
        })
        .collect()
}
