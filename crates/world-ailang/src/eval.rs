//! The strict tree-walking evaluator (ailang.md §5) with the in-process bounds of §6:
//! recursion depth 10 000 (`RT_REC_001`), expression nesting, a step budget (`RT_STEPS_001`),
//! the deadline ([`Fail::Timeout`]), the output cap ([`Fail::OutputLimit`]) and the memory
//! cap (`RT_MEM_001`, see [`super::value`]).

use super::ast::*;
use super::diag::{Diag, Span};
use super::value::*;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Instant;

/// Default maximum call depth (`--max-recursion-depth`, ailang.md §3).
pub const MAX_RECURSION_DEPTH: usize = 10_000;
/// Maximum nesting of expression evaluation frames (guards the Rust stack).
pub const MAX_EVAL_NESTING: usize = 200_000;
/// Default step budget: calls plus match evaluations per run.
pub const DEFAULT_STEP_BUDGET: u64 = 2_000_000_000;

/// Why evaluation stopped early.
#[derive(Debug)]
pub enum Fail {
    /// A runtime error with an `RT…` code (printed `Error: CODE: message`).
    Error(Diag),
    /// The deadline passed.
    Timeout,
    /// Program output passed the output cap.
    OutputLimit,
}

impl From<Diag> for Fail {
    fn from(d: Diag) -> Self {
        Fail::Error(d)
    }
}

/// Shorthand for a runtime error.
pub fn rt(code: &str, msg: impl Into<String>, span: Span) -> Fail {
    Fail::Error(Diag::error(code, msg, Some(span)))
}

/// A loaded program: functions, imported names and constructors.
#[derive(Debug, Default)]
pub struct Program {
    /// Top-level functions by name.
    pub funcs: HashMap<Name, Rc<FuncDecl>>,
    /// Names imported from `std/*` (local name → builtin).
    pub builtins: HashMap<Name, &'static Builtin>,
    /// `import path as Alias`: alias → module path.
    pub aliases: HashMap<Name, String>,
    /// Constructors in scope: name → arity.
    pub ctors: HashMap<Name, usize>,
}

/// Bounds and capabilities for one evaluation.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock deadline.
    pub deadline: Option<Instant>,
    /// Maximum stdout bytes.
    pub output_cap: usize,
    /// Maximum call depth.
    pub max_depth: usize,
    /// Step budget.
    pub steps: u64,
    /// Memory cap in bytes (strings + list cells).
    pub memory_cap: usize,
    /// Capabilities granted (`IO`, `FS`, …); transitions run with none.
    pub caps: HashSet<String>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: None,
            output_cap: world_interp::RunLimits::OUTPUT_CAP,
            max_depth: MAX_RECURSION_DEPTH,
            steps: DEFAULT_STEP_BUDGET,
            memory_cap: DEFAULT_MEMORY_CAP,
            caps: HashSet::new(),
        }
    }
}

/// The evaluator state for one run.
pub struct Machine {
    prog: Rc<Program>,
    limits: Limits,
    depth: usize,
    nesting: usize,
    steps: u64,
    /// The stack guard's floor ([`super::stack_floor`]); 0 = unguarded thread.
    stack_floor: usize,
    /// The deepest frame address seen, reported to [`super::note_stack_low`] on drop.
    stack_low: usize,
    /// Program output (`println`).
    pub stdout: Vec<u8>,
}

impl Drop for Machine {
    fn drop(&mut self) {
        super::note_stack_low(self.stack_low);
    }
}

impl Machine {
    /// A machine for `prog` under `limits` (resets this thread's memory accounting).
    pub fn new(prog: Rc<Program>, limits: Limits) -> Self {
        reset_memory(limits.memory_cap);
        Machine {
            prog,
            limits,
            depth: 0,
            nesting: 0,
            steps: 0,
            stack_floor: super::stack_floor(),
            stack_low: usize::MAX,
            stdout: Vec::new(),
        }
    }

    /// Append program output, enforcing the output cap.
    pub fn write_out(&mut self, bytes: &[u8]) -> Result<(), Fail> {
        if self.stdout.len().saturating_add(bytes.len()) > self.limits.output_cap {
            return Err(Fail::OutputLimit);
        }
        self.stdout.extend_from_slice(bytes);
        Ok(())
    }

    /// Require capability `effect` (`effect '<E>' requires capability` otherwise).
    pub fn require_cap(&self, effect: &str, span: Span) -> Result<(), Fail> {
        if self.limits.caps.contains(effect) {
            Ok(())
        } else {
            Err(Fail::Error(Diag::error(
                "",
                format!("effect '{effect}' requires capability"),
                Some(span),
            )))
        }
    }

    fn tick(&mut self, span: Span) -> Result<(), Fail> {
        self.steps += 1;
        if self.steps > self.limits.steps {
            return Err(rt(
                "RT_STEPS_001",
                format!("step budget of {} evaluations exhausted", self.limits.steps),
                span,
            ));
        }
        if self.steps & 1023 == 0 {
            if let Some(d) = self.limits.deadline {
                if Instant::now() >= d {
                    return Err(Fail::Timeout);
                }
            }
        }
        Ok(())
    }

    fn enter_call(&mut self, name: &str, span: Span) -> Result<(), Fail> {
        self.tick(span)?;
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return Err(rt(
                "RT_REC_001",
                format!(
                    "maximum recursion depth {} exceeded (in '{name}')",
                    self.limits.max_depth
                ),
                span,
            ));
        }
        Ok(())
    }

    /// Call the top-level function `name` with `args`.
    pub fn call_named(&mut self, name: &str, args: Vec<Value>) -> Result<Value, Fail> {
        let f = match self.prog.funcs.get(name) {
            Some(f) => Rc::clone(f),
            None => {
                return Err(Fail::Error(Diag::error(
                    "",
                    format!("entrypoint '{name}' not found in module"),
                    None,
                )))
            }
        };
        let span = f.span;
        self.apply(Value::Func(f), args, span)
    }

    /// Apply a function value to arguments (multi-parameter functions take all at once;
    /// lambdas are curried and accept their arguments one by one or together).
    pub fn apply(&mut self, f: Value, mut args: Vec<Value>, span: Span) -> Result<Value, Fail> {
        match f {
            Value::Func(decl) => {
                let n = decl.params.len();
                if args.len() < n || (args.len() > n && n == 0) {
                    return Err(rt(
                        "RT_ARITY_001",
                        format!(
                            "function '{}' expects {n} argument(s), got {}",
                            decl.name,
                            args.len()
                        ),
                        span,
                    ));
                }
                let rest = args.split_off(n);
                self.enter_call(&decl.name, span)?;
                let mut env: Env = None;
                for (p, v) in decl.params.iter().zip(args) {
                    env = env_bind(&env, Rc::clone(&p.name), v);
                }
                let r = self.eval(&decl.body, &env)?;
                self.depth -= 1;
                if rest.is_empty() {
                    Ok(r)
                } else {
                    self.apply(r, rest, span)
                }
            }
            Value::Closure(c) => {
                let k = c.params.len();
                if args.len() < k {
                    let mut env = c.env.clone();
                    let m = args.len();
                    for (p, v) in c.params.iter().zip(args) {
                        env = env_bind(&env, Rc::clone(p), v);
                    }
                    return Ok(Value::Closure(Rc::new(Closure {
                        params: c.params[m..].to_vec(),
                        body: Rc::clone(&c.body),
                        env,
                        self_name: None,
                    })));
                }
                let rest = args.split_off(k);
                self.enter_call("<lambda>", span)?;
                let mut env = c.env.clone();
                if let Some(me) = &c.self_name {
                    env = env_bind(&env, Rc::clone(me), Value::Closure(Rc::clone(&c)));
                }
                for (p, v) in c.params.iter().zip(args) {
                    env = env_bind(&env, Rc::clone(p), v);
                }
                let body = Rc::clone(&c.body);
                let r = self.eval(&body, &env)?;
                self.depth -= 1;
                if rest.is_empty() {
                    Ok(r)
                } else {
                    self.apply(r, rest, span)
                }
            }
            Value::Builtin(b) => {
                let n = super::stdlib::arity(b);
                if n == 0 && args.len() == 1 && matches!(args[0], Value::Unit) {
                    args.clear();
                }
                if args.len() != n {
                    if args.len() > n && n > 0 {
                        let rest = args.split_off(n);
                        let r = self.apply(Value::Builtin(b), args, span)?;
                        return self.apply(r, rest, span);
                    }
                    return Err(rt(
                        "RT_ARITY_001",
                        format!("'{}' expects {n} argument(s), got {}", b.name, args.len()),
                        span,
                    ));
                }
                self.enter_call(b.name, span)?;
                if let Some(e) = b.effect {
                    self.require_cap(e, span)?;
                }
                let r = (b.f)(self, args, span)?;
                self.depth -= 1;
                Ok(r)
            }
            Value::CtorFn(name, n) => {
                if args.len() != n {
                    return Err(rt(
                        "RT_ARITY_001",
                        format!(
                            "constructor '{name}' expects {n} argument(s), got {}",
                            args.len()
                        ),
                        span,
                    ));
                }
                Ok(Value::Ctor(name, Items::rc(args)))
            }
            other => Err(rt(
                "RT_TYPE_001",
                format!("cannot call a {} value", other.kind()),
                span,
            )),
        }
    }

    fn lookup(&self, name: &Name, env: &Env, span: Span) -> Result<Value, Fail> {
        if let Some(v) = env_get(env, name) {
            return Ok(v.clone());
        }
        if let Some(f) = self.prog.funcs.get(name) {
            return Ok(Value::Func(Rc::clone(f)));
        }
        if let Some(b) = self.prog.builtins.get(name) {
            return Ok(Value::Builtin(b));
        }
        if let Some(n) = self.prog.ctors.get(name) {
            return Ok(if *n == 0 {
                Value::Ctor(Rc::clone(name), Items::rc(Vec::new()))
            } else {
                Value::CtorFn(Rc::clone(name), *n)
            });
        }
        Err(rt("RT_UNBOUND_001", format!("unbound name '{name}'"), span))
    }

    /// Evaluate `e` in `env`.
    pub fn eval(&mut self, e: &Expr, env: &Env) -> Result<Value, Fail> {
        self.nesting += 1;
        if self.nesting > MAX_EVAL_NESTING {
            self.nesting -= 1;
            return Err(rt(
                "RT_REC_001",
                "expression evaluation nested too deeply",
                e.span,
            ));
        }
        let here = super::stack_mark();
        if here < self.stack_low {
            self.stack_low = here;
        }
        if here < self.stack_floor {
            self.nesting -= 1;
            return Err(rt(
                "RT_STACK_001",
                format!(
                    "the evaluator's native stack ran out at call depth {} (--max-recursion-depth is {}); \
                     the program recurses deeper than this machine can evaluate: lower the depth it needs",
                    self.depth, self.limits.max_depth
                ),
                e.span,
            ));
        }
        let r = self.eval_inner(e, env);
        self.nesting -= 1;
        r
    }

    /// One evaluation step of `e` in `env`; [`Self::eval`] wraps it with the depth and stack
    /// guards.
    ///
    /// One function over every expression form, kept whole on purpose (issue 28 §4): each arm
    /// is the evaluation rule of one form, read beside the checker's `infer` arm for the same
    /// form, and a helper per arm would add a native frame to every step of the recursion the
    /// stack guard budgets for.
    fn eval_inner(&mut self, e: &Expr, env: &Env) -> Result<Value, Fail> {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(i) => Ok(Value::Int(*i)),
            ExprKind::Float(f) => Ok(Value::Float(*f)),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Unit => Ok(Value::Unit),
            ExprKind::Str(s) => Ok(Value::str(s.clone())?),
            ExprKind::Interp(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        StrPart::Lit(s) => out.push_str(s),
                        StrPart::Expr(x) => match self.eval(x, env)? {
                            Value::Str(s) => out.push_str(s.as_str()),
                            other => out.push_str(&display(&other)),
                        },
                    }
                }
                Ok(Value::str(out)?)
            }
            ExprKind::Var(n) => self.lookup(n, env, span),
            ExprKind::List(items) => {
                let mut vs = Vec::with_capacity(items.len());
                for it in items {
                    vs.push(self.eval(it, env)?);
                }
                Ok(Value::List(List::from_vec(vs)?))
            }
            ExprKind::Tuple(items) => {
                let mut vs = Vec::with_capacity(items.len());
                for it in items {
                    vs.push(self.eval(it, env)?);
                }
                Ok(Value::Tuple(Items::rc(vs)))
            }
            ExprKind::Record(fields) => {
                let mut fs = Vec::with_capacity(fields.len());
                for (k, x) in fields {
                    fs.push((Rc::clone(k), self.eval(x, env)?));
                }
                Ok(Value::record(fs))
            }
            ExprKind::Update(base, fields) => {
                let b = self.eval(base, env)?;
                let Value::Record(old) = b else {
                    return Err(rt(
                        "RT_TYPE_001",
                        format!("record update on a {} value", b.kind()),
                        span,
                    ));
                };
                let mut fs: Vec<(Name, Value)> = old.to_vec();
                for (k, x) in fields {
                    let v = self.eval(x, env)?;
                    match fs.iter_mut().find(|(n, _)| n == k) {
                        Some(slot) => slot.1 = v,
                        None => fs.push((Rc::clone(k), v)),
                    }
                }
                Ok(Value::record(fs))
            }
            ExprKind::Field(base, name) => {
                if let ExprKind::Var(alias) = &base.kind {
                    if env_get(env, alias).is_none() {
                        if let Some(path) = self.prog.aliases.get(alias) {
                            return match super::stdlib::lookup(path, name) {
                                Some(b) => Ok(Value::Builtin(b)),
                                None => Err(rt(
                                    "RT_UNBOUND_001",
                                    format!("module {path} has no export '{name}'"),
                                    span,
                                )),
                            };
                        }
                    }
                }
                let b = self.eval(base, env)?;
                match b.field(name) {
                    Some(v) => Ok(v.clone()),
                    None => Err(rt(
                        "RT_FIELD_001",
                        format!("no field '{name}' on a {} value", b.kind()),
                        span,
                    )),
                }
            }
            ExprKind::Call(f, args) => {
                let fv = self.eval(f, env)?;
                let mut vs = Vec::with_capacity(args.len());
                for a in args {
                    vs.push(self.eval(a, env)?);
                }
                self.apply(fv, vs, span)
            }
            ExprKind::Lambda(params, body) => Ok(Value::Closure(Rc::new(Closure {
                params: params.clone(),
                body: Rc::clone(body),
                env: env.clone(),
                self_name: None,
            }))),
            ExprKind::LetIn(pat, _, v, body) => {
                let val = self.eval(v, env)?;
                let mut env2 = env.clone();
                if !self.bind(pat, &val, &mut env2) {
                    return Err(rt("RT_MATCH_001", "let pattern did not match", span));
                }
                self.eval(body, &env2)
            }
            ExprKind::LetRecIn(name, v, body) => {
                let val = self.letrec_value(name, v, env)?;
                let env2 = env_bind(env, Rc::clone(name), val);
                self.eval(body, &env2)
            }
            ExprKind::Block(stmts, last) => {
                let mut env2 = env.clone();
                for s in stmts {
                    match s {
                        Stmt::Let(pat, _, x) => {
                            let val = self.eval(x, &env2)?;
                            if !self.bind(pat, &val, &mut env2) {
                                return Err(rt(
                                    "RT_MATCH_001",
                                    "let pattern did not match",
                                    x.span,
                                ));
                            }
                        }
                        Stmt::LetRec(name, x) => {
                            let val = self.letrec_value(name, x, &env2)?;
                            env2 = env_bind(&env2, Rc::clone(name), val);
                        }
                        Stmt::Expr(x) => {
                            self.eval(x, &env2)?;
                        }
                    }
                }
                self.eval(last, &env2)
            }
            ExprKind::If(c, a, b) => match self.eval(c, env)? {
                Value::Bool(true) => self.eval(a, env),
                Value::Bool(false) => self.eval(b, env),
                other => Err(rt(
                    "RT_TYPE_001",
                    format!("if condition is a {}, not a bool", other.kind()),
                    span,
                )),
            },
            ExprKind::Match(scrut, arms) => {
                let v = self.eval(scrut, env)?;
                self.tick(span)?;
                for arm in arms {
                    let mut env2 = env.clone();
                    if !self.bind(&arm.pat, &v, &mut env2) {
                        continue;
                    }
                    if let Some(g) = &arm.guard {
                        match self.eval(g, &env2)? {
                            Value::Bool(true) => {}
                            Value::Bool(false) => continue,
                            other => {
                                return Err(rt(
                                    "RT_TYPE_001",
                                    format!("guard is a {}, not a bool", other.kind()),
                                    g.span,
                                ))
                            }
                        }
                    }
                    return self.eval(&arm.body, &env2);
                }
                let mut shown = String::new();
                show(&v, &mut shown);
                if shown.len() > 200 {
                    let cut = (0..=200)
                        .rev()
                        .find(|i| shown.is_char_boundary(*i))
                        .unwrap_or(0);
                    shown.truncate(cut);
                    shown.push('…');
                }
                Err(rt(
                    "RT_MATCH_001",
                    format!("no match arm matched the value {shown}"),
                    span,
                ))
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, env)?;
                match (op, v) {
                    (UnOp::Neg, Value::Int(i)) => Ok(Value::Int(i.wrapping_neg())),
                    (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
                    (UnOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
                    (_, v) => Err(rt(
                        "RT_TYPE_001",
                        format!("bad operand {} for a unary operator", v.kind()),
                        span,
                    )),
                }
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, env, span),
        }
    }

    fn letrec_value(&mut self, name: &Name, v: &Expr, env: &Env) -> Result<Value, Fail> {
        match &v.kind {
            ExprKind::Lambda(params, body) => Ok(Value::Closure(Rc::new(Closure {
                params: params.clone(),
                body: Rc::clone(body),
                env: env.clone(),
                self_name: Some(Rc::clone(name)),
            }))),
            _ => self.eval(v, env),
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        env: &Env,
        span: Span,
    ) -> Result<Value, Fail> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let a = self.eval(l, env)?;
            return match (op, a) {
                (BinOp::And, Value::Bool(false)) => Ok(Value::Bool(false)),
                (BinOp::Or, Value::Bool(true)) => Ok(Value::Bool(true)),
                (_, Value::Bool(_)) => match self.eval(r, env)? {
                    Value::Bool(b) => Ok(Value::Bool(b)),
                    other => Err(rt(
                        "RT_TYPE_001",
                        format!("'{}' needs bools, got {}", op.symbol(), other.kind()),
                        span,
                    )),
                },
                (_, other) => Err(rt(
                    "RT_TYPE_001",
                    format!("'{}' needs bools, got {}", op.symbol(), other.kind()),
                    span,
                )),
            };
        }
        let a = self.eval(l, env)?;
        let b = self.eval(r, env)?;
        binop(op, a, b, span)
    }

    /// Bind `pat` against `v`, extending `env`; false when it does not match.
    pub fn bind(&self, pat: &Pattern, v: &Value, env: &mut Env) -> bool {
        match (pat, v) {
            (Pattern::Wild, _) => true,
            (Pattern::Var(n), _) => {
                *env = env_bind(env, Rc::clone(n), v.clone());
                true
            }
            (Pattern::Int(i), Value::Int(j)) => i == j,
            (Pattern::Float(f), Value::Float(g)) => f == g,
            (Pattern::Str(s), Value::Str(t)) => s == t.as_str(),
            (Pattern::Bool(b), Value::Bool(c)) => b == c,
            (Pattern::Unit, Value::Unit) => true,
            (Pattern::Ctor(n, ps, _), Value::Ctor(m, vs)) => {
                n == m
                    && ps.len() == vs.len()
                    && ps.iter().zip(vs.iter()).all(|(p, x)| self.bind(p, x, env))
            }
            (Pattern::Tuple(ps), Value::Tuple(vs)) => {
                ps.len() == vs.len() && ps.iter().zip(vs.iter()).all(|(p, x)| self.bind(p, x, env))
            }
            (Pattern::List(ps), Value::List(l)) => {
                let mut it = l.iter();
                for p in ps {
                    match it.next() {
                        Some(x) if self.bind(p, x, env) => {}
                        _ => return false,
                    }
                }
                it.next().is_none()
            }
            (Pattern::Cons(h, t), Value::List(List(Some(cell)))) => {
                self.bind(h, &cell.head, env) && self.bind(t, &Value::List(cell.tail.clone()), env)
            }
            (Pattern::Record(fs), Value::Record(_)) => fs.iter().all(|(k, p)| match v.field(k) {
                Some(x) => self.bind(p, x, env),
                None => false,
            }),
            _ => false,
        }
    }
}

fn compare(a: &Value, b: &Value, span: Span) -> Result<std::cmp::Ordering, Fail> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => {
            Ok(x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal))
        }
        (Value::Str(x), Value::Str(y)) => Ok(x.as_str().cmp(y.as_str())),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => Err(rt(
            "RT_TYPE_001",
            format!("cannot compare {} with {}", a.kind(), b.kind()),
            span,
        )),
    }
}

/// Apply a strict binary operator to two values (ailang.md §5 arithmetic rules).
pub fn binop(op: BinOp, a: Value, b: Value, span: Span) -> Result<Value, Fail> {
    use Value::*;
    let nan_cmp = matches!((&a, &b), (Float(x), Float(y)) if x.is_nan() || y.is_nan());
    Ok(match op {
        BinOp::Eq => Bool(values_equal(&a, &b)),
        BinOp::Ne => Bool(!values_equal(&a, &b)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if nan_cmp => Bool(false),
        BinOp::Lt => Bool(compare(&a, &b, span)?.is_lt()),
        BinOp::Le => Bool(compare(&a, &b, span)?.is_le()),
        BinOp::Gt => Bool(compare(&a, &b, span)?.is_gt()),
        BinOp::Ge => Bool(compare(&a, &b, span)?.is_ge()),
        BinOp::Cons => match b {
            List(l) => List(super::value::List::cons(a, l)?),
            other => {
                return Err(rt(
                    "RT_TYPE_001",
                    format!("'::' needs a list on the right, got {}", other.kind()),
                    span,
                ))
            }
        },
        BinOp::Concat => match (a, b) {
            (List(x), List(y)) => {
                let mut items = x.to_vec();
                let mut out = y;
                while let Some(v) = items.pop() {
                    out = super::value::List::cons(v, out)?;
                }
                List(out)
            }
            (Str(x), Str(y)) => {
                let mut s = String::with_capacity(x.as_str().len() + y.as_str().len());
                s.push_str(x.as_str());
                s.push_str(y.as_str());
                Value::str(s)?
            }
            (a, b) => {
                return Err(rt(
                    "RT_TYPE_001",
                    format!(
                        "'++' joins two lists or two strings, got {} and {}",
                        a.kind(),
                        b.kind()
                    ),
                    span,
                ))
            }
        },
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => match (a, b) {
            (Int(x), Int(y)) => Int(match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(rt("RT_DIV_001", "division by zero", span))
                }
                BinOp::Div => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            }),
            (Float(x), Float(y)) => Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                _ => x % y,
            }),
            (a, b) => {
                return Err(rt(
                    "RT_TYPE_001",
                    format!(
                        "'{}' needs two ints or two floats, got {} and {}",
                        op.symbol(),
                        a.kind(),
                        b.kind()
                    ),
                    span,
                ))
            }
        },
        BinOp::And | BinOp::Or => match (a, b) {
            (Bool(x), Bool(y)) => Bool(if op == BinOp::And { x && y } else { x || y }),
            _ => return Err(rt("RT_TYPE_001", "logical operator needs bools", span)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(op: BinOp, a: i64, b: i64) -> Option<i64> {
        match binop(op, Value::Int(a), Value::Int(b), Span::default()) {
            Ok(Value::Int(i)) => Some(i),
            _ => None,
        }
    }

    #[test]
    fn integer_semantics() {
        assert_eq!(int(BinOp::Div, -7, 2), Some(-3));
        assert_eq!(int(BinOp::Rem, -7, 3), Some(-1));
        assert_eq!(int(BinOp::Rem, 7, -3), Some(1));
        assert_eq!(int(BinOp::Add, i64::MAX, 1), Some(i64::MIN));
        assert_eq!(int(BinOp::Div, i64::MIN, -1), Some(i64::MIN));
        assert_eq!(int(BinOp::Div, 1, 0), None);
        assert_eq!(int(BinOp::Rem, 1, 0), None);
    }

    #[test]
    fn mixed_and_nan_operands() {
        assert!(binop(
            BinOp::Add,
            Value::Int(1),
            Value::Float(1.0),
            Span::default()
        )
        .is_err());
        let nan = binop(
            BinOp::Lt,
            Value::Float(f64::NAN),
            Value::Float(1.0),
            Span::default(),
        );
        assert!(matches!(nan, Ok(Value::Bool(false))));
        let eq = binop(
            BinOp::Eq,
            Value::some(Value::Int(1)),
            Value::some(Value::Int(1)),
            Span::default(),
        );
        assert!(matches!(eq, Ok(Value::Bool(true))));
    }

    #[test]
    fn depth_limit_is_configurable() {
        let src = "module m\nfunc f(n: int) -> int = if n == 0 then 0 else 1 + f(n - 1)\n";
        let r = crate::on_big_stack(move || {
            let m = crate::parser::parse_module(src).map_err(|d| d.code)?;
            let l = crate::loader::load(&m, "m.ail", false).map_err(|_| "load".to_string())?;
            let limits = Limits {
                max_depth: 50,
                ..Limits::default()
            };
            let mut machine = Machine::new(Rc::new(l.program), limits);
            let ok = machine.call_named("f", vec![Value::Int(40)]);
            let mut machine2 = Machine::new(Rc::new(Program::default()), Limits::default());
            let missing = machine2.call_named("nope", vec![]);
            drop(machine2);
            let mut machine = Machine::new(
                Rc::clone(&machine.prog),
                Limits {
                    max_depth: 50,
                    ..Limits::default()
                },
            );
            let deep = machine.call_named("f", vec![Value::Int(60)]);
            Ok::<_, String>((
                matches!(ok, Ok(Value::Int(40))),
                matches!(deep, Err(Fail::Error(ref d)) if d.code == "RT_REC_001"),
                matches!(missing, Err(Fail::Error(ref d)) if d.message == "entrypoint 'nope' not found in module"),
            ))
        });
        assert_eq!(r, Some(Ok((true, true, true))));
    }

    #[test]
    fn the_stack_guard_stops_before_the_native_stack_runs_out() {
        // 48 MiB of stack leaves 16 MiB above the margin: far less than 100 000 nested calls
        // need, while the depth limit would allow them.
        let src = "module m\nfunc f(n: int) -> int = if n == 0 then 0 else 1 + f(n - 1)\n";
        let r = crate::on_stack(48 << 20, move || {
            let m = crate::parser::parse_module(src).map_err(|d| d.code)?;
            let l = crate::loader::load(&m, "m.ail", false).map_err(|_| "load".to_string())?;
            let limits = Limits {
                max_depth: 1_000_000,
                ..Limits::default()
            };
            let mut machine = Machine::new(Rc::new(l.program), limits);
            match machine.call_named("f", vec![Value::Int(90_000)]) {
                Err(Fail::Error(d)) => Ok(d.code),
                other => Err(format!("{other:?}")),
            }
        });
        assert_eq!(r, Some(Ok("RT_STACK_001".to_string())));
    }
}
