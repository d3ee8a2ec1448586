//! Type and effect checking over the subset (ailang.md §6 `check`): Hindley–Milner-style
//! inference with unification, declared signatures as the schemes of top-level functions,
//! monomorphic local `let`s, arity (`TC_ARITY_001`), unbound names (`TC_UNBOUND_001`),
//! ill-typed applications and operators (`TC_TYPE_001`), unknown fields (`TC_FIELD_001`),
//! undeclared effects (`TC_EFF_001`) and non-exhaustive matches (warning `TC_MATCH_001`).

use super::ast::*;
use super::diag::{Diag, Span};
use super::eval::Program;
use super::parser::parse_type;
use super::stdlib;
use super::value::Builtin;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

mod infer;
mod patterns;
use patterns::strict_fallbacks;

/// A type during inference. The parts are shared (`Rc`), so copying a type — which
/// resolution, instantiation and unification do constantly — costs a reference count, not
/// a deep copy.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Unification variable.
    Var(u32),
    /// `int`, `Json`, `List[T]`, `Option[T]`, a declared type …
    Con(Rc<str>, Rc<[Ty]>),
    /// Function of several parameters.
    Fn(Rc<[Ty]>, Rc<Ty>),
    /// Tuple; `()` is the empty tuple.
    Tuple(Rc<[Ty]>),
    /// Record with its fields; `true` when open (`{f: T, ...}`).
    Record(Rc<BTreeMap<Rc<str>, Ty>>, bool),
}

thread_local! {
    /// The type names the checker writes itself, and the empty argument list: shared so that
    /// `int` or `()` does not allocate each time it is written.
    static COMMON: (Rc<[Ty]>, [Rc<str>; 8]) = (
        Rc::from(Vec::new()),
        ["int", "float", "string", "bool", "Json", "bytes", "List", "Option"].map(Rc::from),
    );
}

/// No type arguments (shared).
fn no_args() -> Rc<[Ty]> {
    COMMON.with(|c| Rc::clone(&c.0))
}

/// The name `n`, shared when it is one of [`COMMON`]'s.
fn type_name(n: &str) -> Rc<str> {
    COMMON.with(|c| match c.1.iter().find(|k| &***k == n) {
        Some(k) => Rc::clone(k),
        None => Rc::from(n),
    })
}

fn con(n: &str) -> Ty {
    Ty::Con(type_name(n), no_args())
}

fn list(t: Ty) -> Ty {
    Ty::Con(type_name("List"), Rc::from([t]))
}

fn func(ps: Vec<Ty>, r: Ty) -> Ty {
    Ty::Fn(Rc::from(ps), Rc::new(r))
}

/// A declared type: parameters and body.
#[derive(Clone, Debug)]
struct TypeDef {
    params: Vec<Name>,
    record: Option<Vec<(Name, TypeExpr)>>,
    alias: Option<TypeExpr>,
}

/// A constructor: its type parameters, argument types and result type name.
#[derive(Clone, Debug)]
struct CtorDef {
    params: Vec<Name>,
    args: Vec<TypeExpr>,
    result: Name,
}

/// How a diagnostic names the function of a call: `'name'` for a name or field, else
/// "the function" (rendered only when a diagnostic is written).
struct Callee<'e>(&'e Expr);

impl std::fmt::Display for Callee<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0.kind {
            ExprKind::Var(n) | ExprKind::Field(_, n) => write!(f, "'{n}'"),
            _ => f.write_str("the function"),
        }
    }
}

/// Check `m` (already loaded into `prog`). Returns errors and warnings.
pub fn check(m: &Module, prog: &Program) -> Vec<Diag> {
    let mut c = Checker::new(m, prog);
    c.run(m);
    c.diags
}

struct Checker<'a> {
    prog: &'a Program,
    subst: Vec<Option<Ty>>,
    types: HashMap<Name, TypeDef>,
    ctors: HashMap<Name, CtorDef>,
    funcs: HashMap<Name, (Ty, Vec<String>)>,
    locals: Vec<(Name, Ty)>,
    diags: Vec<Diag>,
    used_effects: Vec<(String, Span)>,
    fields_deferred: Vec<(Ty, Name, Ty, Span)>,
    /// `++` whose operand type was unknown when seen: (operand type, left span, right span).
    concat_deferred: Vec<(Ty, Span, Span)>,
    /// Builtin signatures already parsed in this check, by signature text: a builtin used
    /// many times is parsed once (`None` for a signature that does not parse).
    /// Builtin signatures already converted in this check, by signature text, with whether
    /// they have type variables: a builtin used many times is parsed and converted once and
    /// instantiated per use (`None` for a signature that does not parse).
    sigs: HashMap<&'static str, Option<(Ty, bool)>>,
    /// Constructor types already converted in this check (as `Fn(args, result)` schemes).
    ctor_schemes: HashMap<Name, Ty>,
}

const EFFECTS: [&str; 10] = [
    "IO",
    "FS",
    "Net",
    "Env",
    "Clock",
    "Process",
    "AI",
    "Rand",
    "Debug",
    "SharedMem",
];

impl<'a> Checker<'a> {
    fn new(m: &Module, prog: &'a Program) -> Self {
        let mut c = Checker {
            prog,
            subst: Vec::new(),
            types: HashMap::new(),
            ctors: HashMap::new(),
            funcs: HashMap::new(),
            locals: Vec::new(),
            diags: Vec::new(),
            used_effects: Vec::new(),
            fields_deferred: Vec::new(),
            concat_deferred: Vec::new(),
            sigs: HashMap::new(),
            ctor_schemes: HashMap::new(),
        };
        let std_ctors: [(&str, &str, &[&str], &str); 10] = [
            ("Some", "Option", &["a"], "a"),
            ("None", "Option", &["a"], ""),
            ("Ok", "Result", &["a", "e"], "a"),
            ("Err", "Result", &["a", "e"], "e"),
            ("JNull", "Json", &[], ""),
            ("JBool", "Json", &[], "bool"),
            ("JNumber", "Json", &[], "float"),
            ("JString", "Json", &[], "string"),
            ("JArray", "Json", &[], "[Json]"),
            ("JObject", "Json", &[], "[{key: string, value: Json}]"),
        ];
        for (name, result, params, arg) in std_ctors {
            if !prog.ctors.contains_key(name) {
                continue;
            }
            let args = if arg.is_empty() {
                Vec::new()
            } else {
                parse_type(arg).map(|t| vec![t]).unwrap_or_default()
            };
            c.ctors.insert(
                Rc::from(name),
                CtorDef {
                    params: params.iter().map(|p| Rc::from(*p)).collect(),
                    args,
                    result: Rc::from(result),
                },
            );
        }
        for t in &m.types {
            let def = TypeDef {
                params: t.params.clone(),
                record: match &t.body {
                    TypeBody::Record(fs) => Some(fs.clone()),
                    _ => None,
                },
                alias: match &t.body {
                    TypeBody::Alias(a) => Some(a.clone()),
                    _ => None,
                },
            };
            c.types.insert(Rc::clone(&t.name), def);
            if let TypeBody::Variants(vs) = &t.body {
                for (cn, args, _) in vs {
                    c.ctors.insert(
                        Rc::clone(cn),
                        CtorDef {
                            params: t.params.clone(),
                            args: args.clone(),
                            result: Rc::clone(&t.name),
                        },
                    );
                }
            }
        }
        c
    }

    fn err(&mut self, code: &str, msg: String, span: Span) {
        self.diags.push(Diag::error(code, msg, Some(span)));
    }

    fn fresh(&mut self) -> Ty {
        self.subst.push(None);
        Ty::Var((self.subst.len() - 1) as u32)
    }

    fn resolve(&self, t: &Ty) -> Ty {
        self.resolve_ref(t).clone()
    }

    /// `t` with bound variables followed, borrowed.
    fn resolve_ref<'t>(&'t self, mut t: &'t Ty) -> &'t Ty {
        while let Ty::Var(v) = t {
            match self.subst.get(*v as usize).and_then(|x| x.as_ref()) {
                Some(next) => t = next,
                None => return t,
            }
        }
        t
    }

    fn zonk(&self, t: &Ty, depth: usize) -> Ty {
        if depth > 200 {
            return t.clone();
        }
        match self.resolve(t) {
            Ty::Con(n, args) => Ty::Con(n, args.iter().map(|a| self.zonk(a, depth + 1)).collect()),
            Ty::Fn(ps, r) => Ty::Fn(
                ps.iter().map(|a| self.zonk(a, depth + 1)).collect(),
                Rc::new(self.zonk(&r, depth + 1)),
            ),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|a| self.zonk(a, depth + 1)).collect()),
            Ty::Record(fs, open) => Ty::Record(
                Rc::new(
                    fs.iter()
                        .map(|(k, v)| (Rc::clone(k), self.zonk(v, depth + 1)))
                        .collect(),
                ),
                open,
            ),
            v => v,
        }
    }

    fn show(&self, t: &Ty) -> String {
        let mut s = String::new();
        self.fmt_ty(&self.zonk(t, 0), &mut s);
        s
    }

    fn fmt_ty(&self, t: &Ty, s: &mut String) {
        match t {
            Ty::Var(v) => {
                let _ = write!(s, "t{v}");
            }
            Ty::Con(n, args) if &**n == "List" && args.len() == 1 => {
                s.push('[');
                self.fmt_ty(&args[0], s);
                s.push(']');
            }
            Ty::Con(n, args) => {
                s.push_str(n);
                if !args.is_empty() {
                    s.push('[');
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        self.fmt_ty(a, s);
                    }
                    s.push(']');
                }
            }
            Ty::Fn(ps, r) => {
                s.push('(');
                for (i, a) in ps.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.fmt_ty(a, s);
                }
                s.push_str(") -> ");
                self.fmt_ty(r, s);
            }
            Ty::Tuple(ts) => {
                s.push('(');
                for (i, a) in ts.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.fmt_ty(a, s);
                }
                s.push(')');
            }
            Ty::Record(fs, open) => {
                s.push('{');
                for (i, (k, v)) in fs.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    let _ = write!(s, "{k}: ");
                    self.fmt_ty(v, s);
                }
                if *open {
                    s.push_str(", ...");
                }
                s.push('}');
            }
        }
    }

    fn occurs(&self, v: u32, t: &Ty, depth: usize) -> bool {
        if depth > 200 {
            return false;
        }
        match self.resolve(t) {
            Ty::Var(w) => v == w,
            Ty::Con(_, args) | Ty::Tuple(args) => args.iter().any(|a| self.occurs(v, a, depth + 1)),
            Ty::Fn(ps, r) => {
                ps.iter().any(|a| self.occurs(v, a, depth + 1)) || self.occurs(v, &r, depth + 1)
            }
            Ty::Record(fs, _) => fs.values().any(|a| self.occurs(v, a, depth + 1)),
        }
    }

    /// The record fields of a declared record type `name[args]`.
    fn record_of(&mut self, name: &str, args: &[Ty]) -> Option<BTreeMap<Rc<str>, Ty>> {
        let def = self.types.get(name)?.clone();
        let fields = def.record?;
        let mut vars: HashMap<Name, Ty> = def
            .params
            .iter()
            .cloned()
            .zip(args.iter().cloned())
            .collect();
        let mut out = BTreeMap::new();
        for (f, te) in fields {
            let t = self.convert(&te, &mut vars, false);
            out.insert(f, t);
        }
        Some(out)
    }

    fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), ()> {
        self.unify_d(a, b, 0)
    }

    fn unify_d(&mut self, a: &Ty, b: &Ty, depth: usize) -> Result<(), ()> {
        if depth > 200 {
            return Ok(());
        }
        let (ra, rb) = (self.resolve_ref(a), self.resolve_ref(b));
        // The common case — the same type name with no arguments — needs no copy.
        if let (Ty::Con(n, xs), Ty::Con(m, ys)) = (ra, rb) {
            if xs.is_empty() && ys.is_empty() && n == m {
                return Ok(());
            }
        }
        let (a, b) = (ra.clone(), rb.clone());
        match (&a, &b) {
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), t) | (t, Ty::Var(x)) => {
                if self.occurs(*x, t, 0) {
                    return Err(());
                }
                if let Some(slot) = self.subst.get_mut(*x as usize) {
                    *slot = Some(t.clone());
                }
                Ok(())
            }
            (Ty::Con(n, xs), Ty::Con(m, ys)) if n == m && xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys.iter()) {
                    self.unify_d(x, y, depth + 1)?;
                }
                Ok(())
            }
            (Ty::Con(n, xs), Ty::Record(..)) | (Ty::Record(..), Ty::Con(n, xs)) => {
                let Some(fs) = self.record_of(n, xs) else {
                    return Err(());
                };
                let other = if matches!(a, Ty::Record(..)) {
                    a.clone()
                } else {
                    b.clone()
                };
                self.unify_d(&Ty::Record(Rc::new(fs), false), &other, depth + 1)
            }
            (Ty::Fn(ps, r), Ty::Fn(qs, s)) => {
                if ps.len() == qs.len() {
                    for (x, y) in ps.iter().zip(qs.iter()) {
                        self.unify_d(x, y, depth + 1)?;
                    }
                    return self.unify_d(r, s, depth + 1);
                }
                // `(a, b) -> c` and the curried `a -> b -> c` agree (lambdas are curried).
                let (long, lr, short, sr) = if ps.len() > qs.len() {
                    (ps, r, qs, s)
                } else {
                    (qs, s, ps, r)
                };
                if short.is_empty() {
                    return Err(());
                }
                for (x, y) in long.iter().zip(short.iter()) {
                    self.unify_d(x, y, depth + 1)?;
                }
                let rest = Ty::Fn(Rc::from(&long[short.len()..]), Rc::clone(lr));
                self.unify_d(&rest, sr, depth + 1)
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys.iter()) {
                    self.unify_d(x, y, depth + 1)?;
                }
                Ok(())
            }
            (Ty::Record(fs, o1), Ty::Record(gs, o2)) => {
                for (k, t) in fs.iter() {
                    match gs.get(k) {
                        Some(u) => self.unify_d(t, u, depth + 1)?,
                        None if !*o2 => return Err(()),
                        None => {}
                    }
                }
                if !*o1 && gs.keys().any(|k| !fs.contains_key(k)) {
                    return Err(());
                }
                Ok(())
            }
            _ => Err(()),
        }
    }

    /// Unify `got` with `want`; on failure report `TC_TYPE_001` as "`what`: expected …, got …".
    /// `what` is rendered only then (a call checks every argument; most agree).
    fn expect(&mut self, got: &Ty, want: &Ty, span: Span, what: impl std::fmt::Display) {
        if self.unify(want, got).is_err() {
            let msg = format!(
                "{what}: expected {}, got {}",
                self.show(want),
                self.show(got)
            );
            self.err("TC_TYPE_001", msg, span);
        }
    }

    /// Convert a written type; unknown lower-case names become variables in `vars`.
    fn convert(&mut self, t: &TypeExpr, vars: &mut HashMap<Name, Ty>, report: bool) -> Ty {
        self.convert_d(t, vars, report, 0)
    }

    fn convert_d(
        &mut self,
        t: &TypeExpr,
        vars: &mut HashMap<Name, Ty>,
        report: bool,
        depth: usize,
    ) -> Ty {
        if depth > 50 {
            return self.fresh();
        }
        match t {
            TypeExpr::List(x) => list(self.convert_d(x, vars, report, depth + 1)),
            TypeExpr::Tuple(xs) => Ty::Tuple(
                xs.iter()
                    .map(|x| self.convert_d(x, vars, report, depth + 1))
                    .collect(),
            ),
            TypeExpr::Record(fs, open) => Ty::Record(
                Rc::new(
                    fs.iter()
                        .map(|(k, x)| (Rc::clone(k), self.convert_d(x, vars, report, depth + 1)))
                        .collect(),
                ),
                *open,
            ),
            TypeExpr::Func(ps, r) => Ty::Fn(
                ps.iter()
                    .map(|x| self.convert_d(x, vars, report, depth + 1))
                    .collect(),
                Rc::new(self.convert_d(r, vars, report, depth + 1)),
            ),
            TypeExpr::Named(n, args, span) => {
                let targs: Vec<Ty> = args
                    .iter()
                    .map(|x| self.convert_d(x, vars, report, depth + 1))
                    .collect();
                match &**n {
                    "int" | "float" | "string" | "bool" | "Json" | "bytes" if targs.is_empty() => {
                        con(n)
                    }
                    "Int" | "Float" | "String" | "Bool" if targs.is_empty() => {
                        con(&n.to_lowercase())
                    }
                    "Option" if targs.len() == 1 => Ty::Con(Rc::clone(n), Rc::from(targs)),
                    "Result" if targs.len() == 2 => Ty::Con(Rc::clone(n), Rc::from(targs)),
                    _ => {
                        if let Some(v) = vars.get(n) {
                            return v.clone();
                        }
                        if let Some(def) = self.types.get(n).cloned() {
                            if def.params.len() != targs.len() && report {
                                self.err(
                                    "TC_ARITY_001",
                                    format!(
                                        "type '{n}' takes {} parameter(s), got {}",
                                        def.params.len(),
                                        targs.len()
                                    ),
                                    *span,
                                );
                            }
                            if let Some(a) = def.alias {
                                let mut inner: HashMap<Name, Ty> =
                                    def.params.iter().cloned().zip(targs).collect();
                                return self.convert_d(&a, &mut inner, report, depth + 1);
                            }
                            return Ty::Con(Rc::clone(n), Rc::from(targs));
                        }
                        if n.chars().next().is_some_and(|c| c.is_lowercase()) && targs.is_empty() {
                            let v = self.fresh();
                            vars.insert(Rc::clone(n), v.clone());
                            return v;
                        }
                        if report {
                            self.err("TC_TYPE_002", format!("unknown type '{n}'"), *span);
                        }
                        self.fresh()
                    }
                }
            }
        }
    }

    fn builtin_ty(&mut self, b: &Builtin) -> Ty {
        let scheme = match self.sigs.get(b.sig) {
            Some(s) => s.clone(),
            None => {
                let s = parse_type(b.sig).ok().map(|t| {
                    let mut vars = HashMap::new();
                    let before = self.subst.len();
                    let ty = self.convert(&t, &mut vars, false);
                    (ty, self.subst.len() > before)
                });
                self.sigs.insert(b.sig, s.clone());
                s
            }
        };
        match scheme {
            // Variables of the scheme are never unified: each use gets fresh ones.
            Some((t, true)) => self.instantiate(&t),
            Some((t, false)) => t,
            None => self.fresh(),
        }
    }

    /// Instantiate a function scheme (all its variables are generic).
    fn instantiate(&mut self, t: &Ty) -> Ty {
        let mut map = HashMap::new();
        self.inst(t, &mut map)
    }

    fn inst(&mut self, t: &Ty, map: &mut HashMap<u32, Ty>) -> Ty {
        match self.resolve(t) {
            Ty::Var(v) => map
                .entry(v)
                .or_insert_with(|| {
                    self.subst.push(None);
                    Ty::Var((self.subst.len() - 1) as u32)
                })
                .clone(),
            Ty::Con(n, args) => Ty::Con(n, args.iter().map(|a| self.inst(a, map)).collect()),
            Ty::Fn(ps, r) => Ty::Fn(
                ps.iter().map(|a| self.inst(a, map)).collect(),
                Rc::new(self.inst(&r, map)),
            ),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|a| self.inst(a, map)).collect()),
            Ty::Record(fs, o) => Ty::Record(
                Rc::new(
                    fs.iter()
                        .map(|(k, v)| (Rc::clone(k), self.inst(v, map)))
                        .collect(),
                ),
                o,
            ),
        }
    }

    /// A constructor's argument types and result type, with fresh type variables.
    fn ctor_ty(&mut self, name: &str) -> Option<(Vec<Ty>, Ty)> {
        let scheme = match self.ctor_schemes.get(name) {
            Some(s) => s.clone(),
            None => {
                let def = self.ctors.get(name)?.clone();
                let mut vars: HashMap<Name, Ty> = HashMap::new();
                let mut targs = Vec::new();
                for p in &def.params {
                    let v = self.fresh();
                    vars.insert(Rc::clone(p), v.clone());
                    targs.push(v);
                }
                let args = def
                    .args
                    .iter()
                    .map(|a| self.convert(a, &mut vars, false))
                    .collect();
                let s = func(args, Ty::Con(Rc::clone(&def.result), Rc::from(targs)));
                self.ctor_schemes.insert(Rc::from(name), s.clone());
                s
            }
        };
        match self.instantiate(&scheme) {
            Ty::Fn(args, res) => Some((args.to_vec(), Ty::clone(&res))),
            _ => None,
        }
    }

    // ---------------------------------------------------------------- module

    fn run(&mut self, m: &Module) {
        for t in &m.types {
            let mut vars: HashMap<Name, Ty> = HashMap::new();
            for p in &t.params {
                let v = self.fresh();
                vars.insert(Rc::clone(p), v);
            }
            match &t.body {
                TypeBody::Record(fs) => {
                    for (_, te) in fs {
                        self.convert(te, &mut vars, true);
                    }
                }
                TypeBody::Variants(vs) => {
                    for (_, args, _) in vs {
                        for te in args {
                            self.convert(te, &mut vars, true);
                        }
                    }
                }
                TypeBody::Alias(te) => {
                    self.convert(te, &mut vars, true);
                }
            }
        }
        let mut sigs = Vec::new();
        for f in &m.funcs {
            let mut vars: HashMap<Name, Ty> = HashMap::new();
            for tp in &f.type_params {
                let v = self.fresh();
                vars.insert(Rc::clone(tp), v);
            }
            let ps: Vec<Ty> = f
                .params
                .iter()
                .map(|p| match &p.ty {
                    Some(t) => self.convert(t, &mut vars, true),
                    None => self.fresh(),
                })
                .collect();
            let r = match &f.ret {
                Some(t) => self.convert(t, &mut vars, true),
                None => self.fresh(),
            };
            let mut effs = Vec::new();
            for (e, span) in f.effects.iter().flatten() {
                if !EFFECTS.contains(&&**e) {
                    self.err(
                        "TC_EFF_002",
                        format!("unknown effect '{e}' in the effect row of '{}'", f.name),
                        *span,
                    );
                }
                effs.push(e.to_string());
            }
            let fty = func(ps.clone(), r.clone());
            self.funcs.insert(Rc::clone(&f.name), (fty, effs));
            sigs.push((ps, r));
        }
        if let Some(main) = m
            .funcs
            .iter()
            .find(|f| &*f.name == "main" && f.params.len() > 1)
        {
            // The entry signature (ailang.md §6): `run` refuses it, `check` only warns, as the
            // reference's `check` does not execute.
            self.diags.push(Diag::warning(
                "TC_ENTRY_001",
                format!(
                    "entrypoint 'main' takes {} parameters; `run` passes at most one argument",
                    main.params.len()
                ),
                Some(main.span),
            ));
        }
        for (f, (ps, r)) in m.funcs.iter().zip(sigs) {
            self.check_func(f, &ps, &r);
        }
        for t in &m.tests {
            self.locals.clear();
            for st in &t.body {
                let ty = self.infer(&st.expr);
                self.expect(
                    &ty,
                    &con("bool"),
                    st.expr.span,
                    format_args!("statement of test \"{}\"", t.name),
                );
            }
        }
        for f in &m.funcs {
            strict_fallbacks(f, &mut self.diags);
        }
        for (t, ls, _rs) in std::mem::take(&mut self.concat_deferred) {
            match self.resolve(&t) {
                Ty::Con(n, _) if &*n == "string" || &*n == "List" => {}
                Ty::Var(_) => {
                    // Still unknown: `++` is polymorphic over strings and lists; either works.
                }
                other => {
                    let msg = format!(
                        "'++' joins two strings or two lists, got {}",
                        self.show(&other)
                    );
                    self.err("TC_TYPE_001", msg, ls);
                }
            }
        }
        let deferred = std::mem::take(&mut self.fields_deferred);
        for (base, field, t, span) in deferred {
            if let Some(ft) = self.field_of(&base, &field, span, false) {
                self.expect(&t, &ft, span, format_args!("field '{field}'"));
            }
        }
    }

    fn check_func(&mut self, f: &FuncDecl, ps: &[Ty], r: &Ty) {
        self.locals.clear();
        self.used_effects.clear();
        for (p, t) in f.params.iter().zip(ps) {
            self.locals.push((Rc::clone(&p.name), t.clone()));
        }
        let body_ty = self.infer(&f.body);
        if self.unify(r, &body_ty).is_err() {
            let msg = format!(
                "function '{}' declares return type {} but its body has type {}",
                f.name,
                self.show(r),
                self.show(&body_ty)
            );
            self.err("TC_TYPE_001", msg, f.body.span);
        }
        for clause in [&f.requires, &f.ensures].into_iter().flatten() {
            let mark = self.locals.len();
            self.locals.push((Rc::from("result"), r.clone()));
            let _ = self.infer(clause);
            self.locals.truncate(mark);
        }
        let declared: HashSet<String> = f
            .effects
            .iter()
            .flatten()
            .map(|(e, _)| e.to_string())
            .collect();
        let used = std::mem::take(&mut self.used_effects);
        let mut reported = HashSet::new();
        for (e, span) in used {
            if e == "Debug" || declared.contains(&e) || !reported.insert(e.clone()) {
                continue;
            }
            let how = if f.pure || f.effects.is_none() {
                "is pure"
            } else {
                "does not declare it"
            };
            self.err(
                "TC_EFF_001",
                format!(
                    "function '{}' uses effect '{e}' but {how}; declare it with ! {{{e}}}",
                    f.name
                ),
                span,
            );
        }
    }

    fn lookup_local(&self, n: &str) -> Option<Ty> {
        self.locals
            .iter()
            .rev()
            .find(|(k, _)| &**k == n)
            .map(|(_, t)| t.clone())
    }

    fn var_ty(&mut self, n: &Name, span: Span) -> Ty {
        if let Some(t) = self.lookup_local(n) {
            return t;
        }
        if let Some((t, effs)) = self.funcs.get(n).cloned() {
            for e in effs {
                self.used_effects.push((e, span));
            }
            return self.instantiate(&t);
        }
        if let Some(b) = self.prog.builtins.get(n).copied() {
            if let Some(e) = b.effect {
                self.used_effects.push((e.to_string(), span));
            }
            return self.builtin_ty(b);
        }
        if let Some((args, res)) = self.ctor_ty(n) {
            return if args.is_empty() {
                res
            } else {
                func(args, res)
            };
        }
        self.err("TC_UNBOUND_001", format!("unbound name '{n}'"), span);
        self.fresh()
    }

    /// The type of `base.field`; `None` when it cannot be known yet.
    fn field_of(&mut self, base: &Ty, field: &Name, span: Span, defer_ok: bool) -> Option<Ty> {
        match self.resolve(base) {
            Ty::Record(fs, open) => match fs.get(field) {
                Some(t) => Some(t.clone()),
                None if open => None,
                None => {
                    let msg = format!("record {} has no field '{field}'", self.show(base));
                    self.err("TC_FIELD_001", msg, span);
                    None
                }
            },
            Ty::Con(n, args) => match self.record_of(&n, &args) {
                Some(fs) => match fs.get(field) {
                    Some(t) => Some(t.clone()),
                    None => {
                        self.err(
                            "TC_FIELD_001",
                            format!("type {n} has no field '{field}'"),
                            span,
                        );
                        None
                    }
                },
                None => {
                    let msg = format!(
                        "field access '.{field}' on a value of type {}",
                        self.show(base)
                    );
                    self.err("TC_FIELD_001", msg, span);
                    None
                }
            },
            Ty::Var(_) if defer_ok => None,
            Ty::Var(_) => None,
            other => {
                let msg = format!(
                    "field access '.{field}' on a value of type {}",
                    self.show(&other)
                );
                self.err("TC_FIELD_001", msg, span);
                None
            }
        }
    }

    fn numeric(&mut self, t: &Ty, op: &str, span: Span) {
        match self.resolve(t) {
            Ty::Var(_) => {}
            Ty::Con(n, _) if &*n == "int" || &*n == "float" => {}
            other => {
                let msg = format!(
                    "operator '{op}' needs int or float operands, got {}",
                    self.show(&other)
                );
                self.err("TC_TYPE_001", msg, span);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::Severity;
    use crate::loader::load;
    use crate::parser::parse_module;

    /// Error codes (and warning codes prefixed `W:`) the checker reports for `src`.
    fn codes(src: &str) -> Vec<String> {
        let src = src.to_string();
        crate::on_big_stack(move || {
            let m = match parse_module(&src) {
                Ok(m) => m,
                Err(d) => return vec![d.code],
            };
            let l = match load(&m, "t.ail", false) {
                Ok(l) => l,
                Err(ds) => return ds.into_iter().map(|d| d.code).collect(),
            };
            super::check(&m, &l.program)
                .into_iter()
                .map(|d| {
                    if d.severity == Severity::Warning {
                        format!("W:{}", d.code)
                    } else {
                        d.code
                    }
                })
                .collect()
        })
        .unwrap_or_default()
    }

    #[test]
    fn accepts_well_typed_programs() {
        let ok = [
            "func id[a](x: a) -> a = x\nfunc f() -> (int, string) = (id(1), id(\"s\"))",
            "import std/list (foldl, map)\nfunc f(xs: [int]) -> int = foldl(\\acc x. acc + x, 0, map(\\x. x * 2, xs))",
            "type P = {name: string, age: int}\nfunc f(p: P) -> string = p.name\nfunc g() -> string = f({name: \"a\", age: 1})",
            "import std/json as J\nfunc f(s: string) -> bool = match J.decode(s) { Ok(_) => true, Err(_) => false }",
            "import std/json (jn, encode)\nfunc f() -> string = encode(jn(()))",
            "func f(x: Option[int]) -> int = match x { Some(n) if n > 0 => n, Some(_) => 0, None => -1 }",
            "func f() -> () ! {IO} = println(\"x\")\nfunc g() -> () ! {IO} = f()",
            "type T[a] = Leaf | Node(T[a], a, T[a])\nfunc size[a](t: T[a]) -> int = match t { Leaf => 0, Node(l, _, r) => size(l) + 1 + size(r) }",
        ];
        for src in ok {
            assert_eq!(codes(src), Vec::<String>::new(), "{src}");
        }
    }

    #[test]
    fn refuses_ill_typed_programs() {
        let bad = [
            (
                "func f(x: int) -> int = x\nfunc g() -> int = f(1, 2)",
                "TC_ARITY_001",
            ),
            ("func f() -> int = y", "TC_UNBOUND_001"),
            ("func f() -> int = \"s\"", "TC_TYPE_001"),
            (
                "func f(x: int) -> bool = if x then true else false",
                "TC_TYPE_001",
            ),
            (
                "type P = {a: int}\nfunc f(p: P) -> int = p.b",
                "TC_FIELD_001",
            ),
            ("func f() -> () = println(\"x\")", "TC_EFF_001"),
            ("func f() -> () ! {Teleport} = ()", "TC_EFF_002"),
            ("func f() -> Nope = 1", "TC_TYPE_002"),
            (
                "func f(x: Option[int]) -> int = match x { Some(a, b) => a }",
                "TC_ARITY_001",
            ),
            ("func f() -> [int] = [1, \"a\"]", "TC_TYPE_001"),
            ("func f() -> int = 1\nfunc f() -> int = 2", "TC_DUP_001"),
        ];
        for (src, code) in bad {
            let got = codes(src);
            assert!(got.iter().any(|c| c == code), "{src}: {got:?}");
        }
    }

    #[test]
    fn non_exhaustive_matches_warn() {
        let got = codes("type C = R | G | B\nfunc f(c: C) -> int = match c { R => 1, G => 2 }");
        assert_eq!(got, vec!["W:TC_MATCH_001".to_string()]);
        let got = codes("func f(xs: [int]) -> int = match xs { x :: _ => x }");
        assert_eq!(got, vec!["W:TC_MATCH_001".to_string()]);
        assert!(codes("func f(b: bool) -> int = match b { true => 1, false => 0 }").is_empty());
        // Nested constructor patterns (issue 14): exhaustive without a catch-all.
        assert!(codes(
            "func f(r: Result[Option[int], string]) -> int = match r { Err(_) => 0, Ok(None) => 1, Ok(Some(n)) => n }"
        )
        .is_empty());
        assert_eq!(
            codes("func f(r: Result[Option[int], string]) -> int = match r { Err(_) => 0, Ok(Some(n)) => n }"),
            vec!["W:TC_MATCH_001".to_string()]
        );
        assert!(codes(
            "func f(xs: [int]) -> int = match xs { [] => 0, [x] => x, x :: y :: _ => x + y }"
        )
        .is_empty());
        assert!(codes(
            "func f(p: (bool, bool)) -> int = match p { (true, _) => 1, (false, true) => 2, (false, false) => 3 }"
        )
        .is_empty());
    }

    #[test]
    fn concat_joins_strings_and_lists() {
        assert!(codes("func f(a: string) -> string = a ++ \"!\"").is_empty());
        assert!(codes("func f(a: [int]) -> [int] = a ++ [1]").is_empty());
        assert!(codes(
            "import std/list (foldl)\nfunc f(xs: [string]) -> string = foldl(\\acc s. acc ++ s, \"\", xs)"
        )
        .is_empty());
        assert!(codes("func f(a: string) -> string = a ++ [1]")
            .iter()
            .any(|c| c == "TC_TYPE_001"));
    }

    #[test]
    fn strict_fallback_warns_unless_allowed() {
        let src =
            "func f(x: int) -> Result[string, string] = if x > 0 then Ok(\"\") else Err(\"neg\")";
        assert_eq!(codes(src), vec!["W:STRICT_FALLBACK_001".to_string()]);
        assert!(codes(&format!("@allow_empty_ok(\"empty is real\")\n{src}")).is_empty());
    }
}
