//! The syntax tree of the AILANG subset (ailang.md §4).

use super::diag::Span;
use std::rc::Rc;

/// A name (identifier) as written.
pub type Name = Rc<str>;

/// A type as written in the source.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpr {
    /// `int`, `Json`, `Option[T]`, `List[T]`, a type variable `a` …
    Named(Name, Vec<TypeExpr>, Span),
    /// `[T]` / `list[T]` / `List[T]`.
    List(Box<TypeExpr>),
    /// `(T, U)`; `()` is the empty tuple (unit).
    Tuple(Vec<TypeExpr>),
    /// `{f: T, …}`; `open` when written with `| r` or `...`.
    Record(Vec<(Name, TypeExpr)>, bool),
    /// `T -> U` or `(T, U) -> V`.
    Func(Vec<TypeExpr>, Box<TypeExpr>),
}

/// A pattern in `match`, `let` or lambda position.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// `_`.
    Wild,
    /// A variable binding.
    Var(Name),
    /// Integer literal.
    Int(i64),
    /// Float literal.
    Float(f64),
    /// String literal.
    Str(String),
    /// `true` / `false`.
    Bool(bool),
    /// `()`.
    Unit,
    /// `Ctor(p, …)` or a nullary `Ctor`.
    Ctor(Name, Vec<Pattern>, Span),
    /// `[p, q]` (exact length; `[]` is empty).
    List(Vec<Pattern>),
    /// `p :: rest`.
    Cons(Box<Pattern>, Box<Pattern>),
    /// `(p, q)`.
    Tuple(Vec<Pattern>),
    /// `{f: p, …}` (other fields ignored).
    Record(Vec<(Name, Pattern)>),
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `::`
    Cons,
    /// `++`
    Concat,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Cons => "::",
            BinOp::Concat => "++",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `not e` / `!e`
    Not,
}

/// One piece of an interpolated string.
#[derive(Clone, Debug, PartialEq)]
pub enum StrPart {
    /// Literal text.
    Lit(String),
    /// `${expr}`.
    Expr(Expr),
}

/// An expression with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub span: Span,
}

/// A statement inside a block `{ … }`.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let p (: T)? = e;`
    Let(Pattern, Option<TypeExpr>, Expr),
    /// `letrec f = e;`
    LetRec(Name, Expr),
    /// `e;` (value discarded).
    Expr(Expr),
}

/// One arm of a `match`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    /// The pattern.
    pub pat: Pattern,
    /// `if guard`.
    pub guard: Option<Expr>,
    /// The arm body.
    pub body: Expr,
    /// Where the pattern starts.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `42`
    Int(i64),
    /// `1.5`
    Float(f64),
    /// `"text"` without interpolation.
    Str(String),
    /// `"a ${e} b"`.
    Interp(Vec<StrPart>),
    /// `true` / `false`.
    Bool(bool),
    /// `()`.
    Unit,
    /// A variable, function or nullary constructor name.
    Var(Name),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `(a, b)`.
    Tuple(Vec<Expr>),
    /// `{f: e}`.
    Record(Vec<(Name, Expr)>),
    /// `{r | f: e}`.
    Update(Box<Expr>, Vec<(Name, Expr)>),
    /// `r.f`.
    Field(Box<Expr>, Name),
    /// `f(a, b)`.
    Call(Box<Expr>, Vec<Expr>),
    /// `\x y. e` (curried).
    Lambda(Vec<Name>, Rc<Expr>),
    /// `let p = e in body`.
    LetIn(Pattern, Option<TypeExpr>, Box<Expr>, Box<Expr>),
    /// `letrec f = e in body`.
    LetRecIn(Name, Box<Expr>, Box<Expr>),
    /// `{ stmt; …; e }`.
    Block(Vec<Stmt>, Box<Expr>),
    /// `if c then a else b`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `match e { arms }`.
    Match(Box<Expr>, Vec<Arm>),
    /// `a op b`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `op a`.
    Unary(UnOp, Box<Expr>),
}

/// A function parameter `name: Type`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Parameter name.
    pub name: Name,
    /// Declared type (`None` if omitted).
    pub ty: Option<TypeExpr>,
}

/// An annotation written before a declaration: `@name` or `@name(arg, …)` (v0.41.0's
/// `@allow_empty_ok("why")`, `@verify`, `@route(…)`, `@mcp_name(…)`, `@raw`).
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The name after `@`.
    pub name: Name,
    /// The arguments as written (literals in practice), kept, not evaluated.
    pub args: Vec<Expr>,
    /// Where `@` was written.
    pub span: Span,
}

/// A top-level function.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    /// Annotations written before the declaration, in order.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Name,
    /// `export` was written.
    pub export: bool,
    /// `pure` was written.
    pub pure: bool,
    /// Explicit type parameters `func f[a, b](…)`.
    pub type_params: Vec<Name>,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// Declared return type.
    pub ret: Option<TypeExpr>,
    /// The effect row after `!` (`None` when absent).
    pub effects: Option<Vec<(Name, Span)>>,
    /// `requires { e }` (parsed, kept, not run).
    pub requires: Option<Expr>,
    /// `ensures { e }` (parsed, kept, not run).
    pub ensures: Option<Expr>,
    /// `tests [(arg, expected), …]`: the list expression as written.
    pub tests: Option<Expr>,
    /// The body.
    pub body: Expr,
    /// Where `func` was written.
    pub span: Span,
}

/// The right-hand side of a `type` declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeBody {
    /// `{ f: T, … }`.
    Record(Vec<(Name, TypeExpr)>),
    /// `A(T) | B | …`.
    Variants(Vec<(Name, Vec<TypeExpr>, Span)>),
    /// `= OtherType`.
    Alias(TypeExpr),
}

/// A `type` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDecl {
    /// Name.
    pub name: Name,
    /// Type parameters.
    pub params: Vec<Name>,
    /// Definition.
    pub body: TypeBody,
    /// `deriving (Eq)` names.
    pub deriving: Vec<Name>,
    /// `export` was written.
    pub export: bool,
    /// Where.
    pub span: Span,
}

/// One imported item: `name` or `name as alias`.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportItem {
    /// Name in the module.
    pub name: Name,
    /// Local name.
    pub alias: Name,
    /// Where.
    pub span: Span,
}

/// `import path (items)` or `import path as Alias`.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// `std/json`.
    pub path: String,
    /// Selected items (`None` = everything).
    pub items: Option<Vec<ImportItem>>,
    /// `as Alias` for qualified access `Alias.name`.
    pub alias: Option<Name>,
    /// Where.
    pub span: Span,
}

/// One statement of a `test "name" { … }` block: an expression that must be `true`.
#[derive(Clone, Debug, PartialEq)]
pub struct TestStmt {
    /// The condition.
    pub expr: Expr,
    /// Written as `assert e` (same meaning as a bare `e`).
    pub assert: bool,
}

/// A top-level `test "name" { stmt; … }` block: passes when every statement is `true`.
#[derive(Clone, Debug, PartialEq)]
pub struct TestDecl {
    /// The name string.
    pub name: String,
    /// The statements, in order.
    pub body: Vec<TestStmt>,
    /// Where `test` was written.
    pub span: Span,
}

/// A whole module.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    /// `module a/b` header path (`None` when absent).
    pub name: Option<(String, Span)>,
    /// Imports in order.
    pub imports: Vec<Import>,
    /// Type declarations.
    pub types: Vec<TypeDecl>,
    /// Functions (shared with the loaded program, which indexes them by name).
    pub funcs: Vec<Rc<FuncDecl>>,
    /// `test "…" { }` blocks.
    pub tests: Vec<TestDecl>,
}
