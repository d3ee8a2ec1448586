//! Patterns in the checker: typing a pattern against a type, the exhaustiveness check of a
//! `match` (a usefulness walk over reduced patterns), and the strict-fallback warnings.

use super::*;

impl Checker<'_> {
    pub(super) fn check_pat(&mut self, p: &Pattern, t: &Ty, span: Span) {
        match p {
            Pattern::Wild => {}
            Pattern::Var(n) => self.locals.push((Rc::clone(n), t.clone())),
            Pattern::Int(_) => self.expect(t, &con("int"), span, "pattern"),
            Pattern::Float(_) => self.expect(t, &con("float"), span, "pattern"),
            Pattern::Str(_) => self.expect(t, &con("string"), span, "pattern"),
            Pattern::Bool(_) => self.expect(t, &con("bool"), span, "pattern"),
            Pattern::Unit => self.expect(t, &Ty::Tuple(no_args()), span, "pattern"),
            Pattern::Ctor(n, ps, cspan) => match self.ctor_ty(n) {
                Some((args, res)) => {
                    if self.unify(t, &res).is_err() {
                        let msg = format!(
                            "constructor {n} builds {}, but the value has type {}",
                            self.show(&res),
                            self.show(t)
                        );
                        self.err("TC_TYPE_001", msg, *cspan);
                    }
                    if args.len() != ps.len() {
                        self.err(
                            "TC_ARITY_001",
                            format!(
                                "constructor {n} takes {} argument(s), the pattern gives {}",
                                args.len(),
                                ps.len()
                            ),
                            *cspan,
                        );
                        return;
                    }
                    for (sub, at) in ps.iter().zip(args) {
                        self.check_pat(sub, &at, *cspan);
                    }
                }
                None => self.err(
                    "TC_UNBOUND_001",
                    format!("unknown constructor '{n}'"),
                    *cspan,
                ),
            },
            Pattern::List(ps) => {
                let el = self.fresh();
                self.expect(t, &list(el.clone()), span, "list pattern");
                for sub in ps {
                    self.check_pat(sub, &el, span);
                }
            }
            Pattern::Cons(h, tl) => {
                let el = self.fresh();
                self.expect(t, &list(el.clone()), span, "'::' pattern");
                self.check_pat(h, &el, span);
                self.check_pat(tl, &list(el), span);
            }
            Pattern::Tuple(ps) => {
                let ts: Vec<Ty> = ps.iter().map(|_| self.fresh()).collect();
                self.expect(t, &Ty::Tuple(Rc::from(ts.clone())), span, "tuple pattern");
                for (sub, st) in ps.iter().zip(ts) {
                    self.check_pat(sub, &st, span);
                }
            }
            Pattern::Record(fs) => {
                for (k, sub) in fs {
                    let ft = self
                        .field_of(t, k, span, true)
                        .unwrap_or_else(|| self.fresh());
                    self.check_pat(sub, &ft, span);
                }
            }
        }
    }

    /// Warn `TC_MATCH_001` when the unguarded arms leave a value unmatched. Nested constructor
    /// patterns are understood (`Err(_) | Ok(None) | Ok(Some(n))` is exhaustive): a usefulness
    /// check over the pattern matrix, with constructor sets from the declared types, bools,
    /// lists (`[]` / `::`) and tuples. Literals never complete a type.
    pub(super) fn exhaustive(&mut self, _st: &Ty, arms: &[Arm], span: Span) {
        let rows: Vec<Vec<SPat>> = arms
            .iter()
            .filter(|a| a.guard.is_none())
            .map(|a| vec![SPat::of(&a.pat)])
            .collect();
        let mut budget = 200_000usize;
        let Some(w) = self.uncovered(&rows, 1, &mut budget) else {
            return;
        };
        // At the top level, name every missing constructor (the message lists them all).
        let heads: Vec<&str> = rows
            .iter()
            .filter_map(|r| match &r[0] {
                SPat::Ctor(c, _) => Some(c.as_str()),
                _ => None,
            })
            .collect();
        let wild_row = rows.iter().any(|r| matches!(r[0], SPat::Wild));
        let mut missing: Vec<String> = match heads.first().and_then(|c| self.siblings(c)) {
            Some(sibs) if !wild_row => sibs
                .iter()
                .filter(|(c, _)| !heads.contains(&c.as_str()))
                .map(|(c, n)| SPat::Ctor(c.clone(), vec![SPat::Wild; *n]).render())
                .collect(),
            _ => Vec::new(),
        };
        if missing.is_empty() {
            missing = w.iter().map(SPat::render).collect();
        }
        missing.sort();
        self.diags.push(Diag::warning(
            "TC_MATCH_001",
            format!("non-exhaustive match: no arm for {}", missing.join(", ")),
            Some(span),
        ));
    }

    /// Every constructor of the type `c` belongs to, with arities; `None` for literals.
    fn siblings(&self, c: &str) -> Option<Vec<(String, usize)>> {
        match c {
            "true" | "false" => Some(vec![("false".into(), 0), ("true".into(), 0)]),
            "[]" | "::" => Some(vec![("[]".into(), 0), ("::".into(), 2)]),
            t if t.starts_with("(,") => {
                let n = t[2..t.len() - 1].parse().unwrap_or(0);
                Some(vec![(t.to_string(), n)])
            }
            name => {
                let def = self.ctors.get(name)?;
                let mut v: Vec<(String, usize)> = self
                    .ctors
                    .iter()
                    .filter(|(_, d)| d.result == def.result)
                    .map(|(k, d)| (k.to_string(), d.args.len()))
                    .collect();
                v.sort();
                Some(v)
            }
        }
    }

    /// A vector of `n` patterns no row matches (a witness), or `None` when the rows cover
    /// everything. `budget` bounds the work; when it runs out the match counts as covered.
    fn uncovered(&self, rows: &[Vec<SPat>], n: usize, budget: &mut usize) -> Option<Vec<SPat>> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if n == 0 {
            return if rows.is_empty() {
                Some(Vec::new())
            } else {
                None
            };
        }
        let mut heads: Vec<(String, usize)> = Vec::new();
        for r in rows {
            if let SPat::Ctor(c, args) = &r[0] {
                if !heads.iter().any(|(h, _)| h == c) {
                    heads.push((c.clone(), args.len()));
                }
            }
        }
        let sibs = heads.first().and_then(|(c, _)| self.siblings(c));
        let complete = match &sibs {
            Some(all) => all.iter().all(|(c, _)| heads.iter().any(|(h, _)| h == c)),
            None => false,
        };
        if complete {
            for (c, a) in sibs.unwrap_or_default() {
                let spec: Vec<Vec<SPat>> = rows
                    .iter()
                    .filter_map(|r| match &r[0] {
                        SPat::Ctor(h, args) if *h == c => {
                            let mut v = args.clone();
                            v.resize(a, SPat::Wild);
                            v.extend_from_slice(&r[1..]);
                            Some(v)
                        }
                        SPat::Wild => {
                            let mut v = vec![SPat::Wild; a];
                            v.extend_from_slice(&r[1..]);
                            Some(v)
                        }
                        _ => None,
                    })
                    .collect();
                if let Some(w) = self.uncovered(&spec, a + n - 1, budget) {
                    let mut out = vec![SPat::Ctor(c, w[..a].to_vec())];
                    out.extend_from_slice(&w[a..]);
                    return Some(out);
                }
            }
            return None;
        }
        let default: Vec<Vec<SPat>> = rows
            .iter()
            .filter(|r| matches!(r[0], SPat::Wild))
            .map(|r| r[1..].to_vec())
            .collect();
        let w = self.uncovered(&default, n - 1, budget)?;
        let head = match &sibs {
            Some(all) => all
                .iter()
                .find(|(c, _)| !heads.iter().any(|(h, _)| h == c))
                .map(|(c, a)| SPat::Ctor(c.clone(), vec![SPat::Wild; *a]))
                .unwrap_or(SPat::Wild),
            None => SPat::Wild,
        };
        let mut out = vec![head];
        out.extend(w);
        Some(out)
    }
}

/// A pattern reduced for the exhaustiveness check: a wildcard, a constructor (bools, `[]`,
/// `::`, tuples `(,N)` and declared constructors) or an opaque literal.
#[derive(Clone, Debug, PartialEq)]
enum SPat {
    Wild,
    Ctor(String, Vec<SPat>),
    Lit,
}

impl SPat {
    fn of(p: &Pattern) -> SPat {
        match p {
            Pattern::Wild | Pattern::Var(_) | Pattern::Unit => SPat::Wild,
            Pattern::Bool(b) => SPat::Ctor(b.to_string(), Vec::new()),
            Pattern::Int(_) | Pattern::Float(_) | Pattern::Str(_) => SPat::Lit,
            Pattern::Ctor(n, ps, _) => SPat::Ctor(n.to_string(), ps.iter().map(SPat::of).collect()),
            Pattern::List(ps) => ps
                .iter()
                .rev()
                .fold(SPat::Ctor("[]".into(), Vec::new()), |acc, p| {
                    SPat::Ctor("::".into(), vec![SPat::of(p), acc])
                }),
            Pattern::Cons(h, t) => SPat::Ctor("::".into(), vec![SPat::of(h), SPat::of(t)]),
            Pattern::Tuple(ps) => SPat::Ctor(
                format!("(,{})", ps.len()),
                ps.iter().map(SPat::of).collect(),
            ),
            Pattern::Record(fs) if fs.iter().all(|(_, p)| irrefutable(p)) => SPat::Wild,
            Pattern::Record(_) => SPat::Lit,
        }
    }

    fn render(&self) -> String {
        match self {
            SPat::Wild | SPat::Lit => "_".to_string(),
            SPat::Ctor(c, _) if c == "[]" => "[]".to_string(),
            SPat::Ctor(c, args) if c == "::" && args.len() == 2 => {
                format!("{} :: {}", args[0].render(), args[1].render())
            }
            SPat::Ctor(c, args) if c.starts_with("(,") => {
                let inner: Vec<String> = args.iter().map(SPat::render).collect();
                format!("({})", inner.join(", "))
            }
            SPat::Ctor(c, args) if args.is_empty() => c.clone(),
            SPat::Ctor(c, args) => {
                let inner: Vec<String> = args.iter().map(SPat::render).collect();
                format!("{c}({})", inner.join(", "))
            }
        }
    }
}

/// `STRICT_FALLBACK_001` (warning): a function declared `-> Result[…]` whose result can be the
/// literal empty success `Ok("")` or `Ok([])`, which hides a failure as an empty value.
/// `@allow_empty_ok("why")` on the function silences it (v0.41.0's opt-out).
pub(super) fn strict_fallbacks(f: &FuncDecl, diags: &mut Vec<Diag>) {
    let returns_result = matches!(&f.ret, Some(TypeExpr::Named(n, _, _)) if &**n == "Result");
    if !returns_result || f.annotations.iter().any(|a| &*a.name == "allow_empty_ok") {
        return;
    }
    let mut found = Vec::new();
    tail_empty_oks(&f.body, &mut found, 0);
    for span in found {
        diags.push(Diag::warning(
            "STRICT_FALLBACK_001",
            format!(
                "function '{}' can return an empty success (Ok(\"\") or Ok([])), which hides a \
                 failure; return Err(…) or annotate the function with @allow_empty_ok(\"why\")",
                f.name
            ),
            Some(span),
        ));
    }
}

fn tail_empty_oks(e: &Expr, out: &mut Vec<Span>, depth: usize) {
    if depth > 256 {
        return;
    }
    match &e.kind {
        ExprKind::Call(f, args) => {
            let empty = match args.as_slice() {
                [a] => match &a.kind {
                    ExprKind::Str(s) => s.is_empty(),
                    ExprKind::List(xs) => xs.is_empty(),
                    _ => false,
                },
                _ => false,
            };
            if empty && matches!(&f.kind, ExprKind::Var(n) if &**n == "Ok") {
                out.push(e.span);
            }
        }
        ExprKind::If(_, a, b) => {
            tail_empty_oks(a, out, depth + 1);
            tail_empty_oks(b, out, depth + 1);
        }
        ExprKind::Match(_, arms) => {
            for a in arms {
                tail_empty_oks(&a.body, out, depth + 1);
            }
        }
        ExprKind::Block(_, last)
        | ExprKind::LetIn(_, _, _, last)
        | ExprKind::LetRecIn(_, _, last) => tail_empty_oks(last, out, depth + 1),
        _ => {}
    }
}

fn irrefutable(p: &Pattern) -> bool {
    match p {
        Pattern::Wild | Pattern::Var(_) | Pattern::Unit => true,
        Pattern::Tuple(ps) => ps.iter().all(irrefutable),
        Pattern::Record(fs) => fs.iter().all(|(_, p)| irrefutable(p)),
        _ => false,
    }
}
