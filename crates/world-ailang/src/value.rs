//! Runtime values, with live-size accounting for strings and list cells so a program that
//! allocates without bound ends with `RT_MEM_001` (ailang.md §6 "Bounds").

use super::ast::{Expr, FuncDecl, Name};
use super::diag::{Diag, Span};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::rc::Rc;

/// Default cap on live string bytes plus list cells (16 bytes each), per run: 256 MiB.
pub const DEFAULT_MEMORY_CAP: usize = 256 * 1024 * 1024;
/// Bytes charged per list cell.
pub const CELL_BYTES: usize = 16;

/// Nesting levels dropped recursively before the rest is moved to an explicit work list.
const MAX_DROP_NESTING: usize = 1000;
/// Deepest nesting `show` renders; deeper parts print as `…`.
pub const MAX_SHOW_NESTING: usize = 10_000;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static CAP: Cell<usize> = const { Cell::new(DEFAULT_MEMORY_CAP) };
    static DROP_DEPTH: Cell<usize> = const { Cell::new(0) };
    static GRAVE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Drop `payload` with a bounded stack: values nested deeper than [`MAX_DROP_NESTING`] (built
/// iteratively, e.g. by `foldl`) are parked on a work list that the outermost drop drains in a
/// loop, so no nesting depth can overflow the stack.
fn guarded_drop<T: 'static>(payload: T) {
    let depth = DROP_DEPTH.with(Cell::get);
    if depth >= MAX_DROP_NESTING {
        GRAVE.with(|g| g.borrow_mut().push(Box::new(payload)));
        return;
    }
    DROP_DEPTH.with(|d| d.set(depth + 1));
    drop(payload);
    DROP_DEPTH.with(|d| d.set(depth));
    if depth == 0 {
        DROP_DEPTH.with(|d| d.set(1));
        while let Some(item) = GRAVE.with(|g| g.borrow_mut().pop()) {
            drop(item);
        }
        DROP_DEPTH.with(|d| d.set(0));
    }
}

/// The children of a tuple or constructor application.
#[derive(Debug, Default)]
pub struct Items(Vec<Value>);

impl Items {
    /// Shared items from a vector.
    pub fn rc(items: Vec<Value>) -> Rc<Items> {
        Rc::new(Items(items))
    }
}

impl std::ops::Deref for Items {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        guarded_drop(std::mem::take(&mut self.0));
    }
}

/// The fields of a record, sorted by name.
#[derive(Debug, Default)]
pub struct Fields(Vec<(Name, Value)>);

impl std::ops::Deref for Fields {
    type Target = [(Name, Value)];
    fn deref(&self) -> &[(Name, Value)] {
        &self.0
    }
}

impl Drop for Fields {
    fn drop(&mut self) {
        guarded_drop(std::mem::take(&mut self.0));
    }
}

/// Set this thread's memory cap (bytes) and reset its live counter (called at run start).
pub fn reset_memory(cap: usize) {
    CAP.with(|c| c.set(cap));
    LIVE.with(|l| l.set(0));
}

/// Live accounted bytes on this thread.
pub fn live_bytes() -> usize {
    LIVE.with(Cell::get)
}

fn charge(bytes: usize) -> Result<(), Diag> {
    let cap = CAP.with(Cell::get);
    LIVE.with(|l| {
        let now = l.get().saturating_add(bytes);
        if now > cap {
            return Err(Diag::error(
                "RT_MEM_001",
                format!("memory cap exceeded: the program holds more than {cap} bytes of strings and lists"),
                None,
            ));
        }
        l.set(now);
        Ok(())
    })
}

fn release(bytes: usize) {
    LIVE.with(|l| l.set(l.get().saturating_sub(bytes)));
}

/// An accounted string buffer.
#[derive(Debug)]
pub struct StrBox(String);

impl Drop for StrBox {
    fn drop(&mut self) {
        release(self.0.len());
    }
}

/// A shared immutable string.
#[derive(Clone, Debug)]
pub struct Str(Rc<StrBox>);

impl Str {
    /// Wrap `s`, charging its length against the memory cap (`RT_MEM_001`).
    pub fn new(s: String) -> Result<Str, Diag> {
        charge(s.len())?;
        Ok(Str(Rc::new(StrBox(s))))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0 .0
    }
}

/// One list cell.
#[derive(Debug)]
pub struct Cons {
    /// The element.
    pub head: Value,
    /// The rest.
    pub tail: List,
}

impl Drop for Cons {
    fn drop(&mut self) {
        release(CELL_BYTES);
        guarded_drop(std::mem::replace(&mut self.head, Value::Unit));
        // Unlink iteratively so long lists never recurse on drop.
        let mut next = self.tail.0.take();
        while let Some(rc) = next {
            match Rc::try_unwrap(rc) {
                Ok(mut cell) => next = cell.tail.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// An immutable singly linked list.
#[derive(Clone, Debug, Default)]
pub struct List(pub Option<Rc<Cons>>);

impl List {
    /// The empty list.
    pub fn nil() -> List {
        List(None)
    }

    /// `head :: self` (charges one cell).
    pub fn cons(head: Value, tail: List) -> Result<List, Diag> {
        charge(CELL_BYTES)?;
        Ok(List(Some(Rc::new(Cons { head, tail }))))
    }

    /// Build from a vector, preserving order.
    pub fn from_vec(items: Vec<Value>) -> Result<List, Diag> {
        let mut l = List::nil();
        for v in items.into_iter().rev() {
            l = List::cons(v, l)?;
        }
        Ok(l)
    }

    /// Iterate over the elements.
    pub fn iter(&self) -> ListIter<'_> {
        ListIter(self.0.as_deref())
    }

    /// Elements cloned into a vector.
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().cloned().collect()
    }

    /// Number of elements (O(n)).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True for `[]`.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// Borrowing iterator over a [`List`].
pub struct ListIter<'a>(Option<&'a Cons>);

impl<'a> Iterator for ListIter<'a> {
    type Item = &'a Value;
    fn next(&mut self) -> Option<&'a Value> {
        let c = self.0?;
        self.0 = c.tail.0.as_deref();
        Some(&c.head)
    }
}

/// Local variable environment: a persistent linked list.
pub type Env = Option<Rc<EnvNode>>;

/// One binding.
#[derive(Debug)]
pub struct EnvNode {
    /// Name.
    pub name: Name,
    /// Value.
    pub value: Value,
    /// Outer bindings.
    pub next: Env,
}

/// Look `name` up in `env`.
pub fn env_get<'a>(mut env: &'a Env, name: &str) -> Option<&'a Value> {
    while let Some(node) = env {
        if &*node.name == name {
            return Some(&node.value);
        }
        env = &node.next;
    }
    None
}

/// `env` extended with `name = value`.
pub fn env_bind(env: &Env, name: Name, value: Value) -> Env {
    Some(Rc::new(EnvNode {
        name,
        value,
        next: env.clone(),
    }))
}

impl Drop for EnvNode {
    fn drop(&mut self) {
        guarded_drop((
            std::mem::replace(&mut self.value, Value::Unit),
            self.next.take(),
        ));
    }
}

/// A lambda closed over its environment.
#[derive(Debug)]
pub struct Closure {
    /// Remaining parameters.
    pub params: Vec<Name>,
    /// Body.
    pub body: Rc<Expr>,
    /// Captured environment.
    pub env: Env,
    /// For `letrec`: the name the closure sees itself under.
    pub self_name: Option<Name>,
}

impl Drop for Closure {
    fn drop(&mut self) {
        guarded_drop(self.env.take());
    }
}

/// A built-in function's implementation.
pub type BuiltinFn =
    fn(&mut super::eval::Machine, Vec<Value>, Span) -> Result<Value, super::eval::Fail>;

/// A standard-library or prelude function implemented in Rust.
#[derive(Debug)]
pub struct Builtin {
    /// Module path (`std/json`, or `prelude`).
    pub module: &'static str,
    /// Exported name.
    pub name: &'static str,
    /// Type signature in AILANG syntax (lower-case single letters are type variables).
    pub sig: &'static str,
    /// Effect it performs (`IO`), if any.
    pub effect: Option<&'static str>,
    /// Implementation; receives exactly the arity of `sig` arguments.
    pub f: BuiltinFn,
}

/// A runtime value.
#[derive(Clone, Debug)]
pub enum Value {
    /// 64-bit integer.
    Int(i64),
    /// IEEE-754 binary64.
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// `()`.
    Unit,
    /// UTF-8 string.
    Str(Str),
    /// List.
    List(List),
    /// Tuple (two or more elements).
    Tuple(Rc<Items>),
    /// Record; fields sorted by name.
    Record(Rc<Fields>),
    /// Constructor application (`Some(1)`, `JNull`).
    Ctor(Name, Rc<Items>),
    /// A constructor used as a function value (`map(Some, xs)`).
    CtorFn(Name, usize),
    /// Lambda.
    Closure(Rc<Closure>),
    /// Top-level function.
    Func(Rc<FuncDecl>),
    /// Built-in function.
    Builtin(&'static Builtin),
}

impl Value {
    /// A string value (charged against the memory cap).
    pub fn str(s: impl Into<String>) -> Result<Value, Diag> {
        Ok(Value::Str(Str::new(s.into())?))
    }

    /// A record from unsorted fields.
    pub fn record(mut fields: Vec<(Name, Value)>) -> Value {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Value::Record(Rc::new(Fields(fields)))
    }

    /// `Some(v)`.
    pub fn some(v: Value) -> Value {
        Value::Ctor(Rc::from("Some"), Items::rc(vec![v]))
    }

    /// `None`.
    pub fn none() -> Value {
        Value::Ctor(Rc::from("None"), Items::rc(Vec::new()))
    }

    /// A nullary or n-ary constructor value.
    pub fn ctor(name: &str, args: Vec<Value>) -> Value {
        Value::Ctor(Rc::from(name), Items::rc(args))
    }

    /// Short description of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Unit => "unit",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Record(_) => "record",
            Value::Ctor(..) => "constructor",
            Value::CtorFn(..) | Value::Closure(_) | Value::Func(_) | Value::Builtin(_) => {
                "function"
            }
        }
    }

    /// Field `name` of a record.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Record(fs) => fs.iter().find(|(k, _)| &**k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Structural equality (ailang.md §5 `==`); functions are never equal. Iterative, so any
/// nesting depth is safe.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    let mut work: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((a, b)) = work.pop() {
        let same = match (a, b) {
            (Value::Int(x), Value::Int(y)) => x == y,
            (Value::Float(x), Value::Float(y)) => x == y,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Unit, Value::Unit) => true,
            (Value::Str(x), Value::Str(y)) => x.as_str() == y.as_str(),
            (Value::List(x), Value::List(y)) => {
                let (mut i, mut j) = (x.iter(), y.iter());
                loop {
                    match (i.next(), j.next()) {
                        (None, None) => break true,
                        (Some(p), Some(q)) => work.push((p, q)),
                        _ => break false,
                    }
                }
            }
            (Value::Tuple(x), Value::Tuple(y)) => {
                work.extend(x.iter().zip(y.iter()));
                x.len() == y.len()
            }
            (Value::Record(x), Value::Record(y)) => {
                work.extend(x.iter().zip(y.iter()).map(|(p, q)| (&p.1, &q.1)));
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.0 == q.0)
            }
            (Value::Ctor(n, x), Value::Ctor(m, y)) => {
                work.extend(x.iter().zip(y.iter()));
                n == m && x.len() == y.len()
            }
            _ => false,
        };
        if !same {
            return false;
        }
    }
    true
}

fn show_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "Inf" } else { "-Inf" }.to_string()
    } else if f == f.trunc() && f.abs() < 1e21 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// Quote a string for `show`: `"` + escapes + `"`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `show(v)`: the source-like rendering (strings quoted, floats with a decimal point); parts
/// nested deeper than [`MAX_SHOW_NESTING`] print as `…`.
pub fn show(v: &Value, out: &mut String) {
    show_at(v, out, 0)
}

fn show_at(v: &Value, out: &mut String, depth: usize) {
    if depth > MAX_SHOW_NESTING {
        out.push('…');
        return;
    }
    let show = |x: &Value, out: &mut String| show_at(x, out, depth + 1);
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&show_float(*f)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Unit => out.push_str("()"),
        Value::Str(s) => out.push_str(&quote(s.as_str())),
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                show(x, out);
            }
            out.push(']');
        }
        Value::Tuple(xs) => {
            out.push('(');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                show(x, out);
            }
            out.push(')');
        }
        Value::Record(fs) => {
            out.push('{');
            for (i, (k, x)) in fs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                show(x, out);
            }
            out.push('}');
        }
        Value::Ctor(n, xs) => {
            out.push_str(n);
            if !xs.is_empty() {
                out.push('(');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    show(x, out);
                }
                out.push(')');
            }
        }
        Value::CtorFn(n, _) => out.push_str(n),
        Value::Closure(_) => out.push_str("<function>"),
        Value::Func(f) => {
            let _ = write!(out, "<function {}>", f.name);
        }
        Value::Builtin(b) => {
            let _ = write!(out, "<builtin {}>", b.name);
        }
    }
}

/// The text `ailang run` prints for a result: strings raw, other values as `show`.
pub fn display(v: &Value) -> String {
    match v {
        Value::Str(s) => s.as_str().to_string(),
        Value::Float(f) => show_float(*f),
        other => {
            let mut s = String::new();
            show(other, &mut s);
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_drop_without_recursion_and_release_memory() {
        reset_memory(DEFAULT_MEMORY_CAP);
        let mut l = List::nil();
        for i in 0..200_000 {
            l = List::cons(Value::Int(i), l).unwrap_or_default();
        }
        assert_eq!(live_bytes(), 200_000 * CELL_BYTES);
        drop(l);
        assert_eq!(live_bytes(), 0);
    }

    #[test]
    fn memory_cap_is_a_typed_error() {
        reset_memory(1000);
        let r = Str::new("x".repeat(2000));
        assert_eq!(r.map_err(|d| d.code).err().as_deref(), Some("RT_MEM_001"));
        reset_memory(DEFAULT_MEMORY_CAP);
    }

    #[test]
    fn show_forms() {
        let v = Value::some(Value::List(
            List::from_vec(vec![Value::Int(1), Value::Float(2.0)]).unwrap_or_default(),
        ));
        let mut s = String::new();
        show(&v, &mut s);
        assert_eq!(s, "Some([1, 2.0])");
    }
}
