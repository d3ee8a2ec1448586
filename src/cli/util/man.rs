//! `world util man`: the checked-in man pages, one per command.

/// Render every man page: (file name, bytes), one for `world` and one per subcommand, with
/// global options propagated, an EXAMPLES section everywhere ([`crate::cli::examples`]) and
/// ENVIRONMENT and EXIT STATUS in world(1).
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let mut files = Vec::new();
    let mut cmd = crate::cli::command().disable_help_subcommand(true);
    cmd.build();
    fn walk(
        cmd: &clap::Command,
        prefix: &str,
        path: &str,
        files: &mut Vec<(String, Vec<u8>)>,
    ) -> Result<(), std::io::Error> {
        let name = if prefix.is_empty() {
            cmd.get_name().to_string()
        } else {
            format!("{prefix}-{}", cmd.get_name())
        };
        files.push((format!("{name}.1"), man_page(cmd, &name, path)?));
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            walk(sub, &name, &format!("{path} {}", sub.get_name()), files)?;
        }
        Ok(())
    }
    walk(&cmd, "", "world", &mut files)?;
    Ok(files)
}

/// Escape text for a roff line: backslashes, hyphens, and a leading `.` or `'`.
fn roff_text(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The SYNOPSIS with value placeholders (`[--db <PATH>]`), which clap_mangen leaves out.
fn synopsis(cmd: &clap::Command, path: &str) -> String {
    let mut parts: Vec<String> = vec![format!("\\fB{}\\fR", roff_text(path))];
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let takes_value = a.get_action().takes_values();
        let names: Vec<String> = a
            .get_value_names()
            .map(|v| v.iter().map(|n| format!("<{n}>")).collect())
            .unwrap_or_else(|| vec![format!("<{}>", a.get_id().as_str().to_uppercase())]);
        let value = names.join(" ");
        let text = if a.is_positional() {
            let mut v = format!("\\fI{}\\fR", roff_text(&value));
            if matches!(a.get_num_args(), Some(r) if r.max_values() > 1) {
                v.push_str("...");
            }
            v
        } else {
            let flag = match (a.get_short(), a.get_long()) {
                (Some(s), Some(l)) => format!("\\fB\\-{s}\\fR|\\fB\\-\\-{}\\fR", roff_text(l)),
                (None, Some(l)) => format!("\\fB\\-\\-{}\\fR", roff_text(l)),
                (Some(s), None) => format!("\\fB\\-{s}\\fR"),
                (None, None) => continue,
            };
            if takes_value {
                format!("{flag} \\fI{}\\fR", roff_text(&value))
            } else {
                flag
            }
        };
        parts.push(if a.is_required_set() {
            text
        } else {
            format!("[{text}]")
        });
    }
    if cmd.get_subcommands().any(|s| s.get_name() != "help") {
        parts.push("\\fICOMMAND\\fR".into());
    }
    format!(".SH SYNOPSIS\n{}\n", parts.join(" "))
}

/// One man page: clap_mangen's title, name, synopsis, description, options and
/// subcommands, then EXAMPLES (and for world(1) ENVIRONMENT and EXIT STATUS), then version.
fn man_page(cmd: &clap::Command, name: &str, path: &str) -> Result<Vec<u8>, std::io::Error> {
    let man = clap_mangen::Man::new(cmd.clone().name(name.to_string()));
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut push = |f: &dyn Fn(&mut Vec<u8>) -> Result<(), std::io::Error>| {
        let mut b = Vec::new();
        f(&mut b).map(|_| chunks.push(b))
    };
    push(&|b| man.render_title(b))?;
    push(&|b| man.render_name_section(b))?;
    push(&|b| {
        b.extend_from_slice(synopsis(cmd, path).as_bytes());
        Ok(())
    })?;
    push(&|b| man.render_description_section(b))?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        push(&|b| man.render_options_section(b))?;
    }
    if cmd.get_subcommands().any(|s| s.get_name() != "help") {
        push(&|b| man.render_subcommands_section(b))?;
    }
    let mut extra = String::new();
    if let Some(ex) = crate::cli::examples::for_path(path) {
        extra.push_str(".SH EXAMPLES\n.nf\n");
        for e in ex {
            extra.push_str(&roff_text(e));
            extra.push('\n');
        }
        extra.push_str(".fi\n");
    }
    if path == "world" {
        extra.push_str(".SH ENVIRONMENT\n");
        for (var, what) in crate::cli::examples::ENVIRONMENT {
            extra.push_str(&format!(
                ".TP\n.B {}\n{}\n",
                roff_text(var),
                roff_text(what)
            ));
        }
        extra.push_str(".SH \"EXIT STATUS\"\n");
        for line in crate::cli::error::EXIT_CODES.lines().skip(1) {
            let line = line.trim();
            if let Some((code, what)) = line.split_once(char::is_whitespace) {
                extra.push_str(&format!(".TP\n.B {code}\n{}\n", roff_text(what.trim())));
            }
        }
    }
    push(&|b| {
        b.extend_from_slice(extra.as_bytes());
        Ok(())
    })?;
    if cmd.get_version().is_some() || cmd.get_long_version().is_some() {
        push(&|b| man.render_version_section(b))?;
    }
    // Each clap_mangen chunk starts with the same two-line apostrophe preamble; keep one.
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let text = String::from_utf8_lossy(c);
        let body = if i == 0 {
            text.to_string()
        } else {
            text.lines()
                .filter(|l| !l.starts_with(".ie \\n(.g .ds Aq") && !l.starts_with(".el .ds Aq"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        out.extend_from_slice(body.as_bytes());
    }
    Ok(out)
}
