//! The expression rules of the checker: `infer` and the call, binding and legacy-join
//! helpers it uses (ailang.md §4.3).

use super::*;

impl Checker<'_> {
    // ---------------------------------------------------------------- expressions

    /// The type of `e`, with its constraints unified into the substitution (Algorithm W).
    ///
    /// One function over every expression form, kept whole on purpose (issue 28 §4): each
    /// arm is the typing rule of one form, read side by side with the evaluator's
    /// `eval_inner` arm for the same form; splitting the match would scatter the rules and
    /// add a call level to the recursion the parser's depth bound budgets for.
    pub(super) fn infer(&mut self, e: &Expr) -> Ty {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(_) => con("int"),
            ExprKind::Float(_) => con("float"),
            ExprKind::Str(_) => con("string"),
            ExprKind::Bool(_) => con("bool"),
            ExprKind::Unit => Ty::Tuple(no_args()),
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let StrPart::Expr(x) = p {
                        let t = self.infer(x);
                        if self.unify(&con("string"), &t).is_err() {
                            let msg = format!(
                                "string interpolation needs a string, got {} (use show)",
                                self.show(&t)
                            );
                            self.err("TC_TYPE_001", msg, x.span);
                        }
                    }
                }
                con("string")
            }
            ExprKind::Var(n) => self.var_ty(n, span),
            ExprKind::List(items) => {
                let el = self.fresh();
                for it in items {
                    let t = self.infer(it);
                    self.expect(&t, &el, it.span, "list element");
                }
                list(el)
            }
            ExprKind::Tuple(items) => Ty::Tuple(items.iter().map(|x| self.infer(x)).collect()),
            ExprKind::Record(fields) => {
                let mut fs = BTreeMap::new();
                for (k, x) in fields {
                    let t = self.infer(x);
                    fs.insert(Rc::clone(k), t);
                }
                Ty::Record(Rc::new(fs), false)
            }
            ExprKind::Update(base, fields) => {
                let bt = self.infer(base);
                for (k, x) in fields {
                    let t = self.infer(x);
                    if let Some(ft) = self.field_of(&bt, k, x.span, true) {
                        self.expect(&t, &ft, x.span, format_args!("field '{k}'"));
                    }
                }
                bt
            }
            ExprKind::Field(base, name) => {
                if let ExprKind::Var(alias) = &base.kind {
                    if self.lookup_local(alias).is_none() {
                        if let Some(path) = self.prog.aliases.get(alias).cloned() {
                            return match stdlib::lookup(&path, name) {
                                Some(b) => {
                                    if let Some(eff) = b.effect {
                                        self.used_effects.push((eff.to_string(), span));
                                    }
                                    self.builtin_ty(b)
                                }
                                None => {
                                    self.err(
                                        "TC_UNBOUND_001",
                                        format!("module {path} has no export '{name}'"),
                                        span,
                                    );
                                    self.fresh()
                                }
                            };
                        }
                    }
                }
                let bt = self.infer(base);
                match self.field_of(&bt, name, span, true) {
                    Some(t) => t,
                    None => {
                        let t = self.fresh();
                        if matches!(self.resolve(&bt), Ty::Var(_)) {
                            self.fields_deferred
                                .push((bt, Rc::clone(name), t.clone(), span));
                        }
                        t
                    }
                }
            }
            ExprKind::Call(f, args) => self.infer_call(f, args, span),
            ExprKind::Lambda(params, body) => {
                let mark = self.locals.len();
                let pts: Vec<Ty> = params.iter().map(|_| self.fresh()).collect();
                for (p, t) in params.iter().zip(&pts) {
                    self.locals.push((Rc::clone(p), t.clone()));
                }
                let r = self.infer(body);
                self.locals.truncate(mark);
                pts.into_iter().rev().fold(r, |acc, p| func(vec![p], acc))
            }
            ExprKind::LetIn(pat, ty, v, body) => {
                let mark = self.locals.len();
                self.let_binding(pat, ty.as_ref(), v);
                let t = self.infer(body);
                self.locals.truncate(mark);
                t
            }
            ExprKind::LetRecIn(name, v, body) => {
                let mark = self.locals.len();
                self.letrec_binding(name, v);
                let t = self.infer(body);
                self.locals.truncate(mark);
                t
            }
            ExprKind::Block(stmts, last) => {
                let mark = self.locals.len();
                for s in stmts {
                    match s {
                        Stmt::Let(p, ty, x) => self.let_binding(p, ty.as_ref(), x),
                        Stmt::LetRec(n, x) => self.letrec_binding(n, x),
                        Stmt::Expr(x) => {
                            self.infer(x);
                        }
                    }
                }
                let t = self.infer(last);
                self.locals.truncate(mark);
                t
            }
            ExprKind::If(c, a, b) => {
                let ct = self.infer(c);
                self.expect(&ct, &con("bool"), c.span, "if condition");
                let at = self.infer(a);
                let bt = self.infer(b);
                self.expect(&bt, &at, b.span, "else branch");
                at
            }
            ExprKind::Match(scrut, arms) => {
                let st = self.infer(scrut);
                let rt = self.fresh();
                for arm in arms {
                    let mark = self.locals.len();
                    self.check_pat(&arm.pat, &st, arm.span);
                    if let Some(g) = &arm.guard {
                        let gt = self.infer(g);
                        self.expect(&gt, &con("bool"), g.span, "match guard");
                    }
                    let bt = self.infer(&arm.body);
                    self.expect(&bt, &rt, arm.body.span, "match arm");
                    self.locals.truncate(mark);
                }
                self.exhaustive(&st, arms, span);
                rt
            }
            ExprKind::Unary(op, x) => {
                let t = self.infer(x);
                match op {
                    UnOp::Neg => {
                        self.numeric(&t, "-", span);
                        t
                    }
                    UnOp::Not => {
                        self.expect(&t, &con("bool"), x.span, "'not' operand");
                        con("bool")
                    }
                }
            }
            ExprKind::Binary(op, l, r) => {
                let lt = self.infer(l);
                let rt = self.infer(r);
                let sym = op.symbol();
                match op {
                    BinOp::Or | BinOp::And => {
                        self.expect(
                            &lt,
                            &con("bool"),
                            l.span,
                            format_args!("left operand of '{sym}'"),
                        );
                        self.expect(
                            &rt,
                            &con("bool"),
                            r.span,
                            format_args!("right operand of '{sym}'"),
                        );
                        con("bool")
                    }
                    BinOp::Eq | BinOp::Ne => {
                        self.expect(&rt, &lt, r.span, format_args!("right operand of '{sym}'"));
                        con("bool")
                    }
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        self.expect(&rt, &lt, r.span, format_args!("right operand of '{sym}'"));
                        match self.resolve(&lt) {
                            Ty::Var(_) => {}
                            Ty::Con(n, _) if ["int", "float", "string", "bool"].contains(&&*n) => {}
                            other => {
                                let msg = format!(
                                    "operator '{sym}' cannot compare values of type {}",
                                    self.show(&other)
                                );
                                self.err("TC_TYPE_001", msg, span);
                            }
                        }
                        con("bool")
                    }
                    BinOp::Cons => {
                        self.expect(&rt, &list(lt.clone()), r.span, "right operand of '::'");
                        list(lt)
                    }
                    BinOp::Concat => {
                        // v0.41.0: `++` joins two strings or two lists of one element type.
                        let is_str = |c: &Self, t: &Ty| matches!(c.resolve(t), Ty::Con(ref n, _) if &**n == "string");
                        if is_str(self, &lt) || is_str(self, &rt) {
                            self.expect(&lt, &con("string"), l.span, "left operand of '++'");
                            self.expect(&rt, &con("string"), r.span, "right operand of '++'");
                            return con("string");
                        }
                        let is_var = |c: &Self, t: &Ty| matches!(c.resolve(t), Ty::Var(_));
                        if is_var(self, &lt) && is_var(self, &rt) {
                            // Neither side known yet (`\acc s. acc ++ s`): decided at the end.
                            let res = self.fresh();
                            self.expect(&rt, &lt, r.span, "right operand of '++'");
                            self.expect(&res, &lt, span, "'++'");
                            self.concat_deferred.push((lt, l.span, r.span));
                            return res;
                        }
                        let el = self.fresh();
                        self.expect(&lt, &list(el.clone()), l.span, "left operand of '++'");
                        self.expect(&rt, &list(el.clone()), r.span, "right operand of '++'");
                        list(el)
                    }
                    _ => {
                        self.expect(&rt, &lt, r.span, format_args!("right operand of '{sym}'"));
                        self.numeric(&lt, sym, span);
                        lt
                    }
                }
            }
        }
    }

    fn let_binding(&mut self, pat: &Pattern, ty: Option<&TypeExpr>, v: &Expr) {
        let vt = self.infer(v);
        if let Some(te) = ty {
            let mut vars = HashMap::new();
            let want = self.convert(te, &mut vars, true);
            self.expect(&vt, &want, v.span, "let annotation");
        }
        self.check_pat(pat, &vt, v.span);
    }

    fn letrec_binding(&mut self, name: &Name, v: &Expr) {
        let t = self.fresh();
        self.locals.push((Rc::clone(name), t.clone()));
        let vt = self.infer(v);
        self.expect(&vt, &t, v.span, format_args!("letrec '{name}'"));
    }

    fn infer_call(&mut self, f: &Expr, args: &[Expr], span: Span) -> Ty {
        let ft = self.infer(f);
        let ats: Vec<Ty> = args.iter().map(|a| self.infer(a)).collect();
        if let Some(t) = self.legacy_join(f, args, &ats) {
            return t;
        }
        let fname = Callee(f);
        let mut cur = ft;
        let mut i = 0usize;
        loop {
            match self.resolve(&cur) {
                Ty::Fn(ps, r) => {
                    let remaining = ats.len() - i;
                    // `jn(())`: a zero-parameter builtin also accepts one unit argument.
                    if ps.is_empty()
                        && remaining == 1
                        && matches!(self.resolve(&ats[i]), Ty::Tuple(ref t) if t.is_empty())
                    {
                        return Ty::clone(&r);
                    }
                    if remaining < ps.len() || (ps.is_empty() && remaining > 0) {
                        self.err(
                            "TC_ARITY_001",
                            format!("{fname} expects {} argument(s), got {remaining}", ps.len()),
                            span,
                        );
                        return self.fresh();
                    }
                    for (k, p) in ps.iter().enumerate() {
                        let (a, at) = (&args[i + k], &ats[i + k]);
                        self.expect(
                            at,
                            p,
                            a.span,
                            format_args!("argument {} of {fname}", i + k + 1),
                        );
                    }
                    i += ps.len();
                    if i == ats.len() {
                        return Ty::clone(&r);
                    }
                    cur = Ty::clone(&r);
                }
                Ty::Var(_) => {
                    let r = self.fresh();
                    let _ = self.unify(&cur, &func(ats[i..].to_vec(), r.clone()));
                    return r;
                }
                _ if i > 0 => {
                    let msg = format!("{fname} expects {i} argument(s), got {}", ats.len());
                    self.err("TC_ARITY_001", msg, span);
                    return self.fresh();
                }
                other => {
                    let msg = format!(
                        "{fname} is not a function: it has type {}",
                        self.show(&other)
                    );
                    self.err("TC_TYPE_001", msg, span);
                    return self.fresh();
                }
            }
        }
    }

    /// `std/string.join` is `(delimiter: string, xs: [string]) -> string` in v0.41.0; dialect 1
    /// also accepted `join(xs, delimiter)`, so a call whose first argument is already known to
    /// be a list keeps that meaning (DEC-AIL-STD-2). `None`: not such a call.
    fn legacy_join(&mut self, f: &Expr, args: &[Expr], ats: &[Ty]) -> Option<Ty> {
        if ats.len() != 2 {
            return None;
        }
        let (n, b) = match &f.kind {
            ExprKind::Var(n) if self.lookup_local(n).is_none() && !self.funcs.contains_key(n) => {
                (Rc::clone(n), self.prog.builtins.get(n).copied()?)
            }
            ExprKind::Field(base, n) => match &base.kind {
                ExprKind::Var(a) if self.lookup_local(a).is_none() => {
                    let path = self.prog.aliases.get(a)?;
                    (Rc::clone(n), super::stdlib::lookup(path, n)?)
                }
                _ => return None,
            },
            _ => return None,
        };
        if b.module != "std/string" || b.name != "join" {
            return None;
        }
        if !matches!(self.resolve(&ats[0]), Ty::Con(ref c, _) if &**c == "List") {
            return None;
        }
        let fname = format!("'{n}'");
        let fname = fname.as_str();
        self.expect(
            &ats[0],
            &list(con("string")),
            args[0].span,
            format_args!("argument 1 of {fname}"),
        );
        self.expect(
            &ats[1],
            &con("string"),
            args[1].span,
            format_args!("argument 2 of {fname}"),
        );
        Some(con("string"))
    }
}
