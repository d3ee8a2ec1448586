//! The one table renderer of every command (DEC-UX-1): borderless columns two spaces apart,
//! upper-case headers, fitted to the terminal width without ever breaking an identifier.
//!
//! Each column has a [`Kind`]:
//! - [`Kind::Id`] — identifiers, hashes, numbers, times: printed whole, never wrapped or cut;
//! - [`Kind::List`] — identifiers separated by spaces or `, `: cut only between items, the
//!   rest counted (`a b +2`);
//! - [`Kind::Text`] — free text (titles, summaries): cut with `…`.
//!
//! Fitting a row set to a width (`COLUMNS`, else the terminal's; a pipe gets natural widths
//! and nothing is cut or dropped):
//! 1. every column at its natural width (the widest cell or header line);
//! 2. too wide: free-text columns give up width, widest first, down to their minimum (the
//!    header's width, at least 6); then list columns the same way (hiding whole items, but
//!    each line keeps its first item: `a +2`, never a bare `+3`);
//! 3. still too wide: the droppable column with the lowest priority (`Col::drop`; ties: the
//!    rightmost) is hidden and step 1 starts over; columns without a priority — the key
//!    columns, among them the short hash `show`/`why` take — are never hidden;
//! 4. nothing left to hide: text and lists shrink to one character (`…`). Only when the
//!    never-hidden identifier columns alone are wider than the terminal does a row overflow.
//!
//! A cell may hold several lines (one item per line); each line is laid out as above. Every
//! cell passes through [`cell_text`], the one place that makes stored text safe to print.
//! Streamed output (`world log`) fits a [`Layout`] to its first rows and renders later rows
//! with it: an identifier wider than its column still prints whole, and that row's text cells
//! give up the width.

use std::fmt;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// What a column holds, which decides how it may be shortened (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Identifiers, hashes, numbers, times: never cut.
    Id,
    /// Identifiers separated by spaces (or `, `): cut between items.
    List,
    /// Free text: cut with `…`.
    Text,
}

/// Gap between columns.
const GAP: usize = 2;
/// The narrowest a text or list column is cut to before columns are hidden.
const MIN_TEXT: usize = 6;

/// One column: its header, kind, drop priority and the width it reserves when laid out
/// before its rows are known.
#[derive(Clone, Debug)]
pub struct Col {
    header: String,
    kind: Kind,
    drop: Option<u8>,
    min: usize,
    right: bool,
}

impl Col {
    fn new(header: &str, kind: Kind) -> Col {
        Col {
            header: header.to_uppercase(),
            kind,
            drop: None,
            min: 0,
            right: false,
        }
    }

    /// An identifier column (never cut; kept unless [`Col::drop`] gives it a priority).
    pub fn id(header: &str) -> Col {
        Col::new(header, Kind::Id)
    }

    /// A column of identifiers separated by spaces or `, ` (cut between items).
    pub fn list(header: &str) -> Col {
        Col::new(header, Kind::List)
    }

    /// A free-text column (cut with `…`).
    pub fn text(header: &str) -> Col {
        Col::new(header, Kind::Text)
    }

    /// Hide this column when the row does not fit: lower priorities go first.
    pub fn drop(mut self, priority: u8) -> Col {
        self.drop = Some(priority);
        self
    }

    /// Reserve at least `width` for this column (layouts fitted before their rows are known).
    pub fn min(mut self, width: usize) -> Col {
        self.min = width;
        self
    }

    /// Right-align the cells (numbers).
    pub fn right(mut self) -> Col {
        self.right = true;
        self
    }
}

/// The one function every cell's text passes through before it is measured and printed:
/// control and deceptive characters escaped (`termtext::escape_text`, the one rule for human
/// output, DEC-TRUST3-4), lines kept as the cell's lines.
pub fn cell_text(raw: &str) -> String {
    crate::termtext::escape_text(raw).into_owned()
}

/// Continuation lines of [`fold`] are indented this much more than the line they continue.
pub const FOLD_INDENT: usize = 4;

/// A word that moves down with the token after it when that token does not fit ([`fold`]):
/// a label such as `prev`, `fn` or `#6`, at most this wide.
const LABEL_MAX: usize = 16;

/// One line of a key/value view broken so that every piece fits `width` columns without
/// splitting a token (docs/TABLES.md "Key/value views", issue 29): breaks fall only on runs of
/// spaces; a continuation is indented [`FOLD_INDENT`] more than the line; a short word
/// ending a line (a label: at most [`LABEL_MAX`] columns, not the line's first word, one
/// space before the token after it) moves down with that token when both fit there, so `prev sha256:…` stays together; a
/// `key=value` token too wide for a continuation line breaks after its `=`; a token wider
/// than the width is printed whole on its own line (the terminal overflows it;
/// no break is inserted). `None` (a pipe) or a line that fits: the line unchanged.
pub fn fold(line: &str, limit: Option<usize>) -> Vec<String> {
    let Some(w) = limit.filter(|w| width(line) > *w) else {
        return vec![line.to_string()];
    };
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    let cont = " ".repeat(if indent + FOLD_INDENT < w / 2 {
        indent + FOLD_INDENT
    } else {
        FOLD_INDENT
    });
    // (spaces before, token)
    let mut parts: Vec<(&str, &str)> = Vec::new();
    let mut rest = body;
    let mut sep = "";
    while !rest.is_empty() {
        let end = rest.find(' ').unwrap_or(rest.len());
        let tok = &rest[..end];
        // `key=value` wider than a continuation line: break after `=`, so the value (a
        // hash) is what is kept whole.
        match tok.find('=').filter(|p| p + 1 < tok.len()) {
            Some(p) if width(tok) + cont.len() > w => {
                parts.push((sep, &tok[..=p]));
                parts.push(("", &tok[p + 1..]));
            }
            _ => parts.push((sep, tok)),
        }
        let after = &rest[end..];
        let tail = after.trim_start_matches(' ');
        sep = &after[..after.len() - tail.len()];
        rest = tail;
    }
    let mut out: Vec<String> = Vec::new();
    // The line being built and its tokens (for moving a label down).
    let mut cur = line[..indent].to_string();
    let mut toks: Vec<(usize, &str)> = Vec::new(); // (byte offset in cur, token)
    for (i, (sep, tok)) in parts.into_iter().enumerate() {
        if i == 0 {
            toks.push((cur.len(), tok));
            cur.push_str(tok);
            continue;
        }
        if width(&cur) + sep.len() + width(tok) <= w {
            cur.push_str(sep);
            toks.push((cur.len(), tok));
            cur.push_str(tok);
            continue;
        }
        // A label is joined to its value by one space; two or more are a key column's
        // padding (`✓ plan   sha256:…`), whose key stays put.
        let label = (toks.len() >= 2 && sep == " ")
            .then(|| toks[toks.len() - 1])
            .filter(|(_, l)| width(l) <= LABEL_MAX)
            .filter(|(_, l)| cont.len() + width(l) + 1 + width(tok) <= w);
        let mut next = cont.clone();
        if let Some((at, l)) = label {
            cur.truncate(at);
            let kept = cur.trim_end_matches(' ').len();
            cur.truncate(kept);
            next.push_str(l);
            next.push(' ');
        }
        out.push(std::mem::take(&mut cur));
        cur = next;
        toks.clear();
        if let Some((_, l)) = label {
            toks.push((cont.len(), l));
        }
        toks.push((cur.len(), tok));
        cur.push_str(tok);
    }
    out.push(cur);
    out
}

/// Display width of one line.
fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Widest line of a cell.
fn cell_width(s: &str) -> usize {
    s.split('\n').map(width).max().unwrap_or(0)
}

/// `s` cut to at most `w` columns, ending in `…` when anything was cut.
fn cut_text(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw > w - 1 {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

/// A list cut between items to at most `w` columns, with `+N` for the items left out (or
/// `…` when not even that fits).
fn cut_list(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let (sep, items): (&str, Vec<&str>) = if s.contains(", ") {
        (", ", s.split(", ").collect())
    } else {
        (" ", s.split(' ').collect())
    };
    for keep in (0..items.len()).rev() {
        let rest = format!("+{}", items.len() - keep);
        let head = items[..keep].join(sep);
        let text = if keep == 0 {
            rest
        } else {
            format!("{head}{sep}{rest}")
        };
        if width(&text) <= w {
            return text;
        }
    }
    cut_text(s, w)
}

/// The narrowest a list cell may be cut before columns are hidden: each of its lines keeps
/// its first item (then `+N` for the rest), so a list never shrinks to a bare count while a
/// column could still be hidden instead.
fn list_floor(s: &str) -> usize {
    s.split('\n')
        .map(|line| {
            let (sep, items): (&str, Vec<&str>) = if line.contains(", ") {
                (", ", line.split(", ").collect())
            } else {
                (" ", line.split(' ').collect())
            };
            match items.len() {
                0 | 1 => width(line),
                n => width(items[0]) + width(sep) + format!("+{}", n - 1).len(),
            }
        })
        .max()
        .unwrap_or(0)
}

fn shorten(kind: Kind, s: &str, w: usize) -> String {
    match kind {
        Kind::Id => s.to_string(),
        Kind::List => cut_list(s, w),
        Kind::Text => cut_text(s, w),
    }
}

/// Column widths fitted to a terminal width: which columns show, and how wide.
#[derive(Clone, Debug)]
pub struct Layout {
    cols: Vec<Col>,
    /// Per column: `None` hidden, else its width.
    widths: Vec<Option<usize>>,
    /// The width fitted to (`None`: natural widths, nothing cut).
    limit: Option<usize>,
}

impl Layout {
    /// Fit `cols` to `limit` columns from the rows known so far (`rows` hold [`cell_text`]
    /// cells; module docs for the steps).
    pub fn fit(cols: &[Col], rows: &[Vec<String>], limit: Option<usize>) -> Layout {
        let natural: Vec<usize> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|s| cell_width(s))
                    .chain([width(&c.header), c.min])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut shown: Vec<bool> = vec![true; cols.len()];
        let Some(limit) = limit else {
            return Layout {
                cols: cols.to_vec(),
                widths: natural.into_iter().map(Some).collect(),
                limit: None,
            };
        };
        // Per list column: the width that keeps every cell's first item ([`list_floor`]).
        let list_min: Vec<usize> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| match c.kind {
                Kind::List => rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|s| list_floor(s))
                    .max()
                    .unwrap_or(0),
                _ => 0,
            })
            .collect();
        let floor = |i: usize, last_resort: bool| -> usize {
            match cols[i].kind {
                Kind::Id => natural[i],
                _ if last_resort => natural[i].min(1),
                Kind::List => natural[i].min(width(&cols[i].header).max(MIN_TEXT).max(list_min[i])),
                Kind::Text => natural[i].min(width(&cols[i].header).max(MIN_TEXT)),
            }
        };
        let squeeze = |shown: &[bool], last_resort: bool| -> Option<Vec<usize>> {
            let mut w = natural.clone();
            let n = shown.iter().filter(|s| **s).count();
            let total = |w: &[usize]| -> usize {
                (0..w.len())
                    .filter(|i| shown[*i])
                    .map(|i| w[i])
                    .sum::<usize>()
                    + GAP * n.saturating_sub(1)
            };
            let mut over = total(&w).saturating_sub(limit);
            while over > 0 {
                // Free text gives up width first, then lists (whose cuts hide whole items):
                // the widest shrinkable column of that kind, one column at a time.
                let shrinkable = |kind: Kind| {
                    (0..w.len())
                        .filter(|i| {
                            shown[*i] && cols[*i].kind == kind && w[*i] > floor(*i, last_resort)
                        })
                        .max_by_key(|i| (w[*i], *i))
                };
                let pick = shrinkable(Kind::Text).or_else(|| shrinkable(Kind::List));
                let Some(i) = pick else { break };
                w[i] -= 1;
                over -= 1;
            }
            (over == 0).then_some(w)
        };
        loop {
            if let Some(w) = squeeze(&shown, false) {
                return Layout::with(cols, &shown, w, limit);
            }
            // Hide the droppable column of the lowest priority (the rightmost on a tie).
            let victim = (0..cols.len())
                .filter(|i| shown[*i])
                .filter_map(|i| cols[i].drop.map(|p| (p, std::cmp::Reverse(i), i)))
                .min()
                .map(|(_, _, i)| i);
            match victim {
                Some(i) => shown[i] = false,
                None => break,
            }
        }
        let w = squeeze(&shown, true).unwrap_or_else(|| {
            (0..natural.len())
                .map(|i| floor(i, true).max(natural[i].min(1)))
                .collect()
        });
        Layout::with(cols, &shown, w, limit)
    }

    fn with(cols: &[Col], shown: &[bool], w: Vec<usize>, limit: usize) -> Layout {
        Layout {
            cols: cols.to_vec(),
            widths: w
                .into_iter()
                .zip(shown)
                .map(|(w, s)| s.then_some(w))
                .collect(),
            limit: Some(limit),
        }
    }

    /// The headers of the hidden columns, in column order.
    pub fn hidden(&self) -> Vec<&str> {
        self.cols
            .iter()
            .zip(&self.widths)
            .filter(|(_, w)| w.is_none())
            .map(|(c, _)| c.header.as_str())
            .collect()
    }

    /// The header line.
    pub fn header(&self) -> String {
        let cells: Vec<String> = self.cols.iter().map(|c| c.header.clone()).collect();
        self.row(&cells)
    }

    /// One row (cells already through [`cell_text`]) as its lines joined by `\n`, without
    /// trailing spaces. A cell wider than its column prints whole when it is an identifier;
    /// that row's text and list cells then give up the width.
    pub fn row(&self, cells: &[String]) -> String {
        let shown: Vec<usize> = (0..self.cols.len())
            .filter(|i| self.widths[*i].is_some())
            .collect();
        let lines: Vec<Vec<&str>> = shown
            .iter()
            .map(|i| {
                cells
                    .get(*i)
                    .map(|s| s.split('\n').collect())
                    .unwrap_or_else(|| vec![""])
            })
            .collect();
        let height = lines.iter().map(Vec::len).max().unwrap_or(1);
        let mut out = Vec::with_capacity(height);
        for l in 0..height {
            let texts: Vec<&str> = lines
                .iter()
                .map(|cell| cell.get(l).copied().unwrap_or(""))
                .collect();
            let mut widths: Vec<usize> =
                shown.iter().map(|i| self.widths[*i].unwrap_or(0)).collect();
            // An identifier wider than its column (a streamed row) takes the width it needs
            // from this row's cuttable cells.
            let mut extra: usize = shown
                .iter()
                .zip(&texts)
                .zip(&widths)
                .filter(|((i, _), _)| self.cols[**i].kind == Kind::Id)
                .map(|((_, t), w)| width(t).saturating_sub(*w))
                .sum();
            if self.limit.is_some() {
                while extra > 0 {
                    let pick = (0..shown.len())
                        .filter(|k| self.cols[shown[*k]].kind != Kind::Id && widths[*k] > 1)
                        .max_by_key(|k| widths[*k]);
                    let Some(k) = pick else { break };
                    widths[k] -= 1;
                    extra -= 1;
                }
            }
            let mut line = String::new();
            for (k, i) in shown.iter().enumerate() {
                let c = &self.cols[*i];
                let text = shorten(c.kind, texts[k], widths[k]);
                let pad = widths[k].saturating_sub(width(&text));
                if k > 0 {
                    line.push_str(&" ".repeat(GAP));
                }
                if c.right {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&text);
                } else {
                    line.push_str(&text);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push(line.trim_end().to_string());
        }
        out.join("\n")
    }
}

/// A table of rows rendered at once (every command but the streamed `world log`).
#[derive(Clone, Debug)]
pub struct Table {
    cols: Vec<Col>,
    rows: Vec<Vec<String>>,
    limit: Option<usize>,
}

impl Table {
    /// A table of `cols`, fitted to [`super::output::terminal_width`] when rendered.
    pub fn new(cols: Vec<Col>) -> Table {
        Table {
            cols,
            rows: Vec::new(),
            limit: super::output::terminal_width().map(usize::from),
        }
    }

    /// A table whose columns are all identifiers: the first kept, the others hidden right to
    /// left when the terminal is too narrow (the plain form [`super::output::table`] builds).
    pub fn plain(headers: &[&str]) -> Table {
        let n = headers.len();
        Table::new(
            headers
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let c = Col::id(h);
                    if i == 0 {
                        c
                    } else {
                        c.drop(u8::try_from(n - i).unwrap_or(u8::MAX))
                    }
                })
                .collect(),
        )
    }

    /// Fit to `limit` columns instead of the terminal (`None`: natural widths).
    pub fn width(mut self, limit: Option<usize>) -> Table {
        self.limit = limit;
        self
    }

    /// Append a row (missing cells print empty; every cell through [`cell_text`]).
    pub fn add_row<I, S>(&mut self, cells: I) -> &mut Table
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.rows
            .push(cells.into_iter().map(|c| cell_text(c.as_ref())).collect());
        self
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The layout of these rows at this table's width.
    pub fn layout(&self) -> Layout {
        Layout::fit(&self.cols, &self.rows, self.limit)
    }

    /// The header and every row, lines joined by `\n`, no trailing spaces or newline.
    pub fn render(&self) -> String {
        let l = self.layout();
        let mut lines = vec![l.header()];
        lines.extend(self.rows.iter().map(|r| l.row(r)));
        lines.join("\n")
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fold` never splits a token, keeps their order, fits every piece that is not a lone
    /// over-wide token, and keeps `label value` pairs together.
    #[test]
    fn fold_breaks_between_tokens_only() {
        let h = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        let kv = format!("  world           {}", h('a'));
        assert_eq!(fold(&kv, None), vec![kv.clone()]);
        assert_eq!(fold(&kv, Some(200)), vec![kv.clone()]);
        assert_eq!(
            fold(&kv, Some(80)),
            ["  world".to_string(), format!("      {}", h('a'))]
        );
        let why = format!(
            "#6 coordinator:cli prev {} fn {} interpreter {} (matched by invocation)",
            h('b'),
            h('c'),
            h('d')
        );
        let got = fold(&why, Some(80));
        assert_eq!(
            got,
            [
                "#6 coordinator:cli".to_string(),
                format!("    prev {}", h('b')),
                format!("    fn {}", h('c')),
                "    interpreter".to_string(),
                format!("    {}", h('d')),
                "    (matched by invocation)".to_string(),
            ]
        );
        let receipt = format!("cli:ep1:read-1 resolved resultRef={}", h('e'));
        assert_eq!(
            fold(&receipt, Some(80)),
            [
                "cli:ep1:read-1 resolved resultRef=".to_string(),
                format!("    {}", h('e'))
            ]
        );
        assert_eq!(fold(&receipt, Some(120)), vec![receipt.clone()]);
        let link = format!("✓ plan    {} world/effect-plan/v1 re-hashes", h('f'));
        assert_eq!(
            fold(&link, Some(80)),
            [
                "✓ plan".to_string(),
                format!("    {}", h('f')),
                "    world/effect-plan/v1 re-hashes".to_string()
            ]
        );
        for line in [kv, why, format!("x {} y", "z".repeat(100))] {
            for w in [20usize, 40, 79, 80, 81, 120] {
                let pieces = fold(&line, Some(w));
                let words: Vec<&str> = pieces.iter().flat_map(|p| p.split_whitespace()).collect();
                assert_eq!(words, line.split_whitespace().collect::<Vec<_>>(), "{w}");
                for p in &pieces {
                    assert!(
                        width(p) <= w || p.split_whitespace().count() == 1,
                        "{w}: {p:?}"
                    );
                }
            }
        }
    }

    fn widest(s: &str) -> usize {
        s.lines().map(width).max().unwrap_or(0)
    }

    fn sample() -> Table {
        let mut t = Table::new(vec![
            Col::id("entry"),
            Col::id("episode").drop(1),
            Col::text("summary"),
            Col::list("effects").drop(2),
        ]);
        t.add_row([
            "33831a602c51",
            "release-2026-q4",
            "deploy the new release to every region and tell the on-call",
            "Workspace.Write/worktree Git.Commit/repo Human.Approve/approvals",
        ]);
        t.add_row(["0123456789ab", "ep1", "short", "-"]);
        t
    }

    #[test]
    fn a_pipe_gets_natural_widths() {
        let t = sample().width(None);
        let text = t.render();
        assert!(text.contains("deploy the new release to every region and tell the on-call"));
        assert!(text.lines().all(|l| l == l.trim_end()));
    }

    #[test]
    fn text_is_cut_before_columns_are_hidden_and_ids_never_break() {
        for w in [200, 120, 100, 80, 60, 40, 30, 20] {
            let text = sample().width(Some(w)).render();
            assert!(widest(&text) <= w, "width {w}:\n{text}");
            assert!(text.contains("33831a602c51"), "width {w}:\n{text}");
            assert!(text.contains("0123456789ab"), "width {w}:\n{text}");
            // An episode is shown whole or not at all.
            assert!(
                !text.contains("release-") || text.contains("release-2026-q4"),
                "width {w}:\n{text}"
            );
            // A list item is shown whole or counted.
            for item in ["Workspace.Write/worktree", "Git.Commit/repo"] {
                let prefix = &item[..6];
                assert!(
                    !text.contains(prefix) || text.contains(item),
                    "width {w}:\n{text}"
                );
            }
        }
        let wide = sample().width(Some(200)).render();
        assert!(wide.contains("Human.Approve/approvals"), "{wide}");
        let narrow = sample().width(Some(60)).render();
        assert!(narrow.contains('…'), "{narrow}");
    }

    #[test]
    fn the_lowest_priority_goes_first_and_keys_stay() {
        let l = sample().width(Some(25)).layout();
        assert_eq!(l.hidden(), vec!["EPISODE", "EFFECTS"]);
        // A list keeps its first item or goes: at 45 the effects would be a bare `+3`.
        let l = sample().width(Some(45)).layout();
        assert_eq!(l.hidden(), vec!["EPISODE", "EFFECTS"]);
        let l = sample().width(Some(55)).layout();
        assert_eq!(l.hidden(), vec!["EPISODE"]);
    }

    #[test]
    fn a_streamed_row_keeps_a_wider_identifier_whole() {
        let cols = vec![Col::id("id"), Col::text("title")];
        let l = Layout::fit(&cols, &[vec!["abc".into(), "x".repeat(50)]], Some(30));
        let row = l.row(&["abcdefghijkl".into(), "y".repeat(50)]);
        assert!(row.starts_with("abcdefghijkl  "), "{row}");
        assert!(width(&row) <= 30, "{row}");
    }

    #[test]
    fn cells_are_escaped_and_multi_line_cells_align() {
        let mut t = Table::new(vec![Col::id("a"), Col::list("b")]).width(Some(80));
        t.add_row(["x\u{1b}[31m", "one\ntwo"]);
        let text = t.render();
        assert!(!text.contains('\u{1b}'), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[2].find("two"), lines[1].find("one"), "{text}");
    }

    #[test]
    fn lists_are_cut_between_items() {
        assert_eq!(cut_list("aa bb cc dd", 8), "aa bb +2");
        assert_eq!(cut_list("aa bb cc dd", 5), "aa +3");
        assert_eq!(cut_list("aa, bb, cc", 7), "aa, +2");
        assert_eq!(cut_list("aa bb", 5), "aa bb");
        assert_eq!(cut_text("hello world", 6), "hello…");
    }

    /// A list keeps its first item while a column can still be hidden: at 40 columns the
    /// droppable NOTE goes, not the budget's first grant (it was a bare `+4` before).
    #[test]
    fn a_list_keeps_its_first_item_before_a_column_is_cut_to_a_count() {
        let mut t = Table::new(vec![
            Col::id("id"),
            Col::id("note").drop(1),
            Col::list("budget"),
        ])
        .width(Some(40));
        t.add_row([
            "abcdef123456",
            "attended",
            "world.apply=world:10/10 a=b:1/1 c=d:2/2 e=f:1/1 g=h:2/2",
        ]);
        let text = t.render();
        assert!(text.contains("world.apply=world:10/10"), "{text}");
        assert!(!text.contains("attended"), "{text}");
        assert!(text.lines().all(|l| width(l) <= 40), "{text}");
        assert_eq!(list_floor("aa bb cc\ndd"), "aa +2".len());
    }
}
