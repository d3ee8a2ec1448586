//! Recursive-descent parser for the AILANG subset (ailang.md §4), with an explicit nesting
//! bound so hostile input gives `PAR_DEPTH`, never a stack overflow.

use super::ast::*;
use super::diag::{Diag, Span};
use super::lexer::{lex, LexPart, Tok, Token};
use std::rc::Rc;

mod expr;

/// Deepest syntactic nesting (expressions, patterns, types, operator chains) accepted.
pub const MAX_PARSE_DEPTH: usize = 512;

const KEYWORDS: [&str; 21] = [
    "module", "import", "type", "func", "pure", "export", "let", "letrec", "in", "if", "then",
    "else", "match", "true", "false", "not", "requires", "ensures", "tests", "deriving", "as",
];

/// The annotation names v0.41.0's parser accepts (`parseAnnotation`'s cases).
pub const ANNOTATIONS: [&str; 5] = ["allow_empty_ok", "verify", "route", "mcp_name", "raw"];

/// Parse a whole module. The first syntax error is returned (`PAR…` codes).
pub fn parse_module(src: &str) -> Result<Module, Diag> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        skip_tests: false,
    };
    p.module()
}

/// Parse a module for running only: `tests [...]` clauses and `test "…" { }` blocks are
/// skipped (a clause's body is not even tokenised, [`super::lexer::lex_for_run`]; a block's
/// brackets are balanced over its tokens) and left out of the module, so a run pays almost
/// nothing for them. Used by the capsule, whose sources were fully checked when published.
///
/// # Errors
/// As [`parse_module`], except for errors inside the skipped tests.
pub fn parse_module_for_run(src: &str) -> Result<Module, Diag> {
    let toks = super::lexer::lex_for_run(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        skip_tests: true,
    };
    p.module()
}

/// Parse a single expression (used by tests and the REPL-style helpers).
pub fn parse_expr(src: &str) -> Result<Expr, Diag> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        skip_tests: false,
    };
    let e = p.expr()?;
    p.expect_eof()?;
    Ok(e)
}

/// Parse a type written in AILANG syntax (used for builtin signatures).
pub fn parse_type(src: &str) -> Result<TypeExpr, Diag> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        skip_tests: false,
    };
    let t = p.ty()?;
    p.expect_eof()?;
    Ok(t)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Skip `tests [...]` clauses and `test "…" { }` blocks unparsed ([`parse_module_for_run`]).
    skip_tests: bool,
}

type PResult<T> = Result<T, Diag>;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Int(i) => format!("number {i}"),
        Tok::Float(f) => format!("number {f}"),
        Tok::Str(_) => "a string".to_string(),
        Tok::Sym(s) => format!("'{s}'"),
        Tok::Eof => "end of input".to_string(),
    }
}

fn is_upper(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_uppercase())
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> &Tok {
        match self.toks.get(self.pos + k).or_else(|| self.toks.last()) {
            Some(t) => &t.tok,
            None => &Tok::Eof,
        }
    }

    fn span(&self) -> Span {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map(|t| t.span)
            .unwrap_or_default()
    }

    /// Consume the current token and return it. Tokens are moved out (the parser never
    /// looks back), so a string token's parts are not copied; at the end the `Eof` stays.
    fn advance(&mut self) -> Tok {
        match self.toks.get_mut(self.pos) {
            Some(t) if !matches!(t.tok, Tok::Eof) => {
                self.pos += 1;
                std::mem::replace(&mut t.tok, Tok::Eof)
            }
            Some(_) => {
                self.pos += 1;
                Tok::Eof
            }
            None => Tok::Eof,
        }
    }

    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }

    fn is_kw(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if &**x == s)
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, s: &str) -> bool {
        if self.is_kw(s) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn err<T>(&self, what: &str) -> PResult<T> {
        Err(Diag::error(
            "PAR001",
            format!("expected {what}, found {}", describe(self.peek())),
            Some(self.span()),
        ))
    }

    fn expect_sym(&mut self, s: &str) -> PResult<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            self.err(&format!("'{s}'"))
        }
    }

    fn expect_kw(&mut self, s: &str) -> PResult<()> {
        if self.eat_kw(s) {
            Ok(())
        } else {
            self.err(&format!("'{s}'"))
        }
    }

    fn expect_eof(&mut self) -> PResult<()> {
        if matches!(self.peek(), Tok::Eof) {
            Ok(())
        } else {
            self.err("end of input")
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Name> {
        match self.peek().clone() {
            Tok::Ident(s) if !KEYWORDS.contains(&&*s) => {
                self.advance();
                Ok(s)
            }
            _ => self.err(what),
        }
    }

    /// A field name: any identifier, keywords included (`{module: …}`).
    fn field_name(&mut self) -> PResult<Name> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.advance();
                Ok(s)
            }
            _ => self.err("a field name"),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err(Diag::error(
                "PAR_DEPTH",
                format!("expression nests deeper than {MAX_PARSE_DEPTH} levels"),
                Some(self.span()),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---------------------------------------------------------------- module level

    fn module(&mut self) -> PResult<Module> {
        let mut m = Module::default();
        if self.is_kw("module") {
            let span = self.span();
            self.advance();
            let path = self.path()?;
            m.name = Some((path, span));
        }
        let mut annotations: Vec<Annotation> = Vec::new();
        loop {
            if !annotations.is_empty()
                && !matches!(self.peek(), Tok::Ident(k) if &**k == "export" || &**k == "pure" || &**k == "func")
                && !self.is_sym("@")
            {
                return Err(Diag::error(
                    "PAR_ANNOTATION_002",
                    format!(
                        "annotation '@{}' must be followed by a function declaration",
                        annotations[0].name
                    ),
                    Some(annotations[0].span),
                ));
            }
            match self.peek().clone() {
                Tok::Eof => return Ok(m),
                Tok::Sym("@") => annotations.push(self.annotation()?),
                Tok::Ident(k) if &*k == "test" && matches!(self.peek_at(1), Tok::Str(_)) => {
                    if self.skip_tests {
                        self.advance();
                        self.advance();
                        self.skip_balanced("{")?;
                    } else {
                        let t = self.test_decl()?;
                        m.tests.push(t);
                    }
                }
                Tok::Ident(k) if &*k == "let" || &*k == "letrec" => {
                    return Err(Diag::error(
                        "PAR_UNSUPPORTED_TOPLEVEL_LET",
                        format!(
                            "module-level '{k}' is not in AILANG v0.41.0 (it came in a later release); \
                             define a zero-argument function instead: func name() -> T = …"
                        ),
                        Some(self.span()),
                    ))
                }
                Tok::Ident(k) if &*k == "import" => {
                    let imp = self.import()?;
                    m.imports.push(imp);
                }
                Tok::Ident(k) if &*k == "export" || &*k == "pure" || &*k == "func" || &*k == "type" => {
                    let span = self.span();
                    let mut export = false;
                    let mut pure = false;
                    loop {
                        if self.eat_kw("export") {
                            export = true;
                        } else if self.eat_kw("pure") {
                            pure = true;
                        } else {
                            break;
                        }
                    }
                    if !annotations.is_empty() && self.is_kw("type") {
                        return Err(Diag::error(
                            "PAR_ANNOTATION_002",
                            format!(
                                "annotation '@{}' must be followed by a function declaration",
                                annotations[0].name
                            ),
                            Some(annotations[0].span),
                        ));
                    }
                    if self.eat_kw("type") {
                        let t = self.type_decl(export, span)?;
                        m.types.push(t);
                    } else if self.eat_kw("func") {
                        let mut f = self.func(export, pure, span)?;
                        f.annotations = std::mem::take(&mut annotations);
                        m.funcs.push(Rc::new(f));
                    } else {
                        return self.err("'func' or 'type'");
                    }
                }
                Tok::Ident(k) if &*k == "module" => {
                    return Err(Diag::error(
                        "PAR001",
                        "the module header must be the first item",
                        Some(self.span()),
                    ))
                }
                _ => return self.err("a top-level declaration (import, type, func, test)"),
            }
        }
    }

    /// `@name` or `@name(arg, …)`; the names are the ones v0.41.0's parser accepts.
    fn annotation(&mut self) -> PResult<Annotation> {
        let span = self.span();
        self.expect_sym("@")?;
        let name = match self.advance() {
            Tok::Ident(s) => s,
            other => {
                return Err(Diag::error(
                    "PAR_ANNOTATION_001",
                    format!(
                        "expected an annotation name after '@', found {}",
                        describe(&other)
                    ),
                    Some(span),
                ))
            }
        };
        if !ANNOTATIONS.contains(&&*name) {
            return Err(Diag::error(
                "PAR_ANNOTATION_001",
                format!(
                    "unknown annotation '@{name}'; AILANG v0.41.0 accepts @{}",
                    ANNOTATIONS.join(", @")
                ),
                Some(span),
            ));
        }
        let args = if self.eat_sym("(") {
            self.expr_list(")")?
        } else {
            Vec::new()
        };
        Ok(Annotation { name, args, span })
    }

    /// `test "name" { stmt (; | newline) … }`, each statement `e` or `assert e`.
    /// Skip from the opening `open` (`[` or `{`) to its matching close, counting `(`/`)`,
    /// `[`/`]` and `{`/`}` together.
    fn skip_balanced(&mut self, open: &'static str) -> PResult<()> {
        if !self.is_sym(open) {
            return self.err(if open == "[" { "'['" } else { "'{'" });
        }
        let mut depth = 0usize;
        while let Some(t) = self.toks.get(self.pos) {
            match t.tok {
                Tok::Sym("(" | "[" | "{") => depth += 1,
                Tok::Sym(")" | "]" | "}") => depth = depth.saturating_sub(1),
                Tok::Eof => break,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 {
                return Ok(());
            }
        }
        self.err("the end of the tests")
    }

    fn test_decl(&mut self) -> PResult<TestDecl> {
        let span = self.span();
        self.expect_kw("test")?;
        let name = match self.advance() {
            Tok::Str(parts) => match parts.as_slice() {
                [LexPart::Lit(s)] => s.clone(),
                _ => {
                    return Err(Diag::error(
                        "PAR001",
                        "a test name cannot interpolate",
                        Some(span),
                    ))
                }
            },
            _ => return self.err("a test name string"),
        };
        self.expect_sym("{")?;
        let mut body = Vec::new();
        loop {
            while self.eat_sym(";") {}
            if self.eat_sym("}") {
                break;
            }
            if matches!(self.peek(), Tok::Eof) {
                return self.err("'}' closing the test block");
            }
            let assert = self.eat_kw("assert");
            let expr = self.expr()?;
            body.push(TestStmt { expr, assert });
        }
        Ok(TestDecl { name, body, span })
    }

    fn path(&mut self) -> PResult<String> {
        let mut path = String::new();
        loop {
            match self.peek().clone() {
                Tok::Ident(s) => {
                    self.advance();
                    path.push_str(&s);
                }
                _ => return self.err("a module path segment"),
            }
            if self.is_sym("/") {
                self.advance();
                path.push('/');
            } else {
                return Ok(path);
            }
        }
    }

    fn import(&mut self) -> PResult<Import> {
        let span = self.span();
        self.expect_kw("import")?;
        let path = self.path()?;
        let mut imp = Import {
            path,
            items: None,
            alias: None,
            span,
        };
        if self.eat_sym("(") {
            let mut items = Vec::new();
            while !self.is_sym(")") {
                let ispan = self.span();
                let name = match self.advance() {
                    Tok::Ident(s) => s,
                    _ => {
                        return Err(Diag::error(
                            "PAR001",
                            "expected an imported name",
                            Some(ispan),
                        ))
                    }
                };
                let alias = if self.eat_kw("as") {
                    self.ident("an alias name")?
                } else {
                    Rc::clone(&name)
                };
                items.push(ImportItem {
                    name,
                    alias,
                    span: ispan,
                });
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym(")")?;
            imp.items = Some(items);
        } else if self.eat_kw("as") {
            imp.alias = Some(self.ident("a module alias")?);
        }
        Ok(imp)
    }

    fn type_params(&mut self) -> PResult<Vec<Name>> {
        let mut ps = Vec::new();
        if self.eat_sym("[") {
            while !self.is_sym("]") {
                ps.push(self.ident("a type parameter")?);
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym("]")?;
        }
        Ok(ps)
    }

    fn type_decl(&mut self, export: bool, span: Span) -> PResult<TypeDecl> {
        let name = self.ident("a type name")?;
        let params = self.type_params()?;
        self.expect_sym("=")?;
        let body = if self.is_sym("{") {
            TypeBody::Record(self.record_type_fields()?.0)
        } else {
            let single_upper = matches!(self.peek(), Tok::Ident(s) if is_upper(s));
            let next_continues = matches!(self.peek_at(1), Tok::Sym("(" | "|"));
            let alias_name = matches!(self.peek(), Tok::Ident(s) if ["Json", "Option", "Result", "List"].contains(&&**s))
                || matches!(self.peek_at(1), Tok::Sym("["));
            if self.is_sym("|") || (single_upper && (next_continues || !alias_name)) {
                self.eat_sym("|");
                let mut vs = Vec::new();
                loop {
                    let vspan = self.span();
                    let cname = self.ident("a constructor name")?;
                    let mut args = Vec::new();
                    if self.eat_sym("(") {
                        while !self.is_sym(")") {
                            args.push(self.ty()?);
                            if !self.eat_sym(",") {
                                break;
                            }
                        }
                        self.expect_sym(")")?;
                    }
                    vs.push((cname, args, vspan));
                    if !self.eat_sym("|") {
                        break;
                    }
                }
                TypeBody::Variants(vs)
            } else {
                TypeBody::Alias(self.ty()?)
            }
        };
        let mut deriving = Vec::new();
        if self.eat_kw("deriving") {
            self.expect_sym("(")?;
            while !self.is_sym(")") {
                deriving.push(self.ident("a class name")?);
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym(")")?;
        }
        Ok(TypeDecl {
            name,
            params,
            body,
            deriving,
            export,
            span,
        })
    }

    fn func(&mut self, export: bool, pure: bool, span: Span) -> PResult<FuncDecl> {
        let name = self.ident("a function name")?;
        let type_params = self.type_params()?;
        self.expect_sym("(")?;
        let mut params = Vec::new();
        while !self.is_sym(")") {
            let pname = self.ident("a parameter name")?;
            let ty = if self.eat_sym(":") {
                Some(self.ty()?)
            } else {
                None
            };
            params.push(Param { name: pname, ty });
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym(")")?;
        let ret = if self.eat_sym("->") {
            Some(self.ty()?)
        } else {
            None
        };
        let mut effects = None;
        if self.eat_sym("!") {
            self.expect_sym("{")?;
            let mut effs = Vec::new();
            while !self.is_sym("}") {
                let espan = self.span();
                let e = self.ident("an effect name")?;
                if self.eat_sym("[") {
                    // `Rand[mode=…]`: parameters are kept out of the subset's meaning.
                    let mut level = 1usize;
                    while level > 0 {
                        match self.advance() {
                            Tok::Sym("[") => level += 1,
                            Tok::Sym("]") => level -= 1,
                            Tok::Eof => return self.err("']'"),
                            _ => {}
                        }
                    }
                }
                effs.push((e, espan));
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym("}")?;
            effects = Some(effs);
        }
        let mut requires = None;
        let mut ensures = None;
        let mut tests = None;
        loop {
            if self.eat_kw("requires") {
                requires = Some(self.braced_expr()?);
            } else if self.eat_kw("ensures") {
                ensures = Some(self.braced_expr()?);
            } else if self.is_kw("tests") {
                self.advance();
                if !self.is_sym("[") {
                    return self.err("'[' after tests");
                }
                if self.skip_tests {
                    self.skip_balanced("[")?;
                } else {
                    tests = Some(self.expr()?);
                }
            } else {
                break;
            }
        }
        let body = if self.eat_sym("=") {
            self.expr()?
        } else if self.is_sym("{") {
            let bspan = self.span();
            self.advance();
            self.enter()?;
            let b = self.block_rest(bspan)?;
            self.leave();
            b
        } else {
            return self.err("'=' or '{' starting the function body");
        };
        Ok(FuncDecl {
            annotations: Vec::new(),
            name,
            export,
            pure,
            type_params,
            params,
            ret,
            effects,
            requires,
            ensures,
            tests,
            body,
            span,
        })
    }

    fn braced_expr(&mut self) -> PResult<Expr> {
        let span = self.span();
        self.expect_sym("{")?;
        self.enter()?;
        let e = self.block_rest(span)?;
        self.leave();
        Ok(e)
    }

    // ---------------------------------------------------------------- types

    fn record_type_fields(&mut self) -> PResult<(Vec<(Name, TypeExpr)>, bool)> {
        self.expect_sym("{")?;
        let mut fields = Vec::new();
        let mut open = false;
        while !self.is_sym("}") {
            if self.eat_sym("...") {
                open = true;
                break;
            }
            if self.eat_sym("|") {
                self.ident("a row variable")?;
                open = true;
                break;
            }
            let f = self.field_name()?;
            self.expect_sym(":")?;
            let t = self.ty()?;
            fields.push((f, t));
            if self.is_sym("|") {
                continue;
            }
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym("}")?;
        Ok((fields, open))
    }

    fn ty(&mut self) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> PResult<TypeExpr> {
        let span = self.span();
        let atom = match self.peek().clone() {
            Tok::Sym("(") => {
                self.advance();
                let mut ts = Vec::new();
                while !self.is_sym(")") {
                    ts.push(self.ty()?);
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.expect_sym(")")?;
                if self.eat_sym("->") {
                    let r = self.ty()?;
                    return Ok(TypeExpr::Func(ts, Box::new(r)));
                }
                if ts.len() == 1 {
                    ts.pop().unwrap_or(TypeExpr::Tuple(Vec::new()))
                } else {
                    TypeExpr::Tuple(ts)
                }
            }
            Tok::Sym("[") => {
                self.advance();
                let t = self.ty()?;
                self.expect_sym("]")?;
                TypeExpr::List(Box::new(t))
            }
            Tok::Sym("{") => {
                let (fs, open) = self.record_type_fields()?;
                TypeExpr::Record(fs, open)
            }
            Tok::Ident(name) => {
                self.advance();
                let mut args = Vec::new();
                if self.eat_sym("[") {
                    while !self.is_sym("]") {
                        args.push(self.ty()?);
                        if !self.eat_sym(",") {
                            break;
                        }
                    }
                    self.expect_sym("]")?;
                }
                match (&*name, args.len()) {
                    ("list" | "List", 1) => TypeExpr::List(Box::new(args.remove(0))),
                    ("unit", 0) => TypeExpr::Tuple(Vec::new()),
                    _ => TypeExpr::Named(name, args, span),
                }
            }
            _ => return self.err("a type"),
        };
        if self.eat_sym("->") {
            let r = self.ty()?;
            return Ok(TypeExpr::Func(vec![atom], Box::new(r)));
        }
        Ok(atom)
    }

    // ---------------------------------------------------------------- patterns

    fn pattern(&mut self) -> PResult<Pattern> {
        self.enter()?;
        let r = self.pattern_inner();
        self.leave();
        r
    }

    fn pattern_inner(&mut self) -> PResult<Pattern> {
        let head = self.pattern_atom()?;
        if self.eat_sym("::") {
            let tail = self.pattern()?;
            return Ok(Pattern::Cons(Box::new(head), Box::new(tail)));
        }
        Ok(head)
    }

    fn pattern_list(&mut self, close: &str) -> PResult<Vec<Pattern>> {
        let mut ps = Vec::new();
        while !self.is_sym(close) {
            ps.push(self.pattern()?);
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym(close)?;
        Ok(ps)
    }

    fn pattern_atom(&mut self) -> PResult<Pattern> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Ident(s) if &*s == "_" => {
                self.advance();
                Ok(Pattern::Wild)
            }
            Tok::Ident(s) if &*s == "true" || &*s == "false" => {
                self.advance();
                Ok(Pattern::Bool(&*s == "true"))
            }
            Tok::Ident(s) if is_upper(&s) => {
                self.advance();
                let args = if self.eat_sym("(") {
                    self.pattern_list(")")?
                } else {
                    Vec::new()
                };
                Ok(Pattern::Ctor(s, args, span))
            }
            Tok::Ident(_) => Ok(Pattern::Var(self.ident("a pattern")?)),
            Tok::Int(i) => {
                self.advance();
                Ok(Pattern::Int(i))
            }
            Tok::Float(f) => {
                self.advance();
                Ok(Pattern::Float(f))
            }
            Tok::Sym("-") => {
                self.advance();
                match self.advance() {
                    Tok::Int(i) => Ok(Pattern::Int(i.wrapping_neg())),
                    Tok::Float(f) => Ok(Pattern::Float(-f)),
                    _ => Err(Diag::error(
                        "PAR001",
                        "expected a number after '-' in a pattern",
                        Some(span),
                    )),
                }
            }
            Tok::Str(parts) => {
                self.advance();
                match parts.as_slice() {
                    [LexPart::Lit(s)] => Ok(Pattern::Str(s.clone())),
                    _ => Err(Diag::error(
                        "PAR001",
                        "string patterns cannot interpolate",
                        Some(span),
                    )),
                }
            }
            Tok::Sym("(") => {
                self.advance();
                let mut ps = self.pattern_list(")")?;
                Ok(match ps.len() {
                    0 => Pattern::Unit,
                    1 => ps.remove(0),
                    _ => Pattern::Tuple(ps),
                })
            }
            Tok::Sym("[") => {
                self.advance();
                let mut ps = Vec::new();
                let mut rest = None;
                while !self.is_sym("]") {
                    if self.eat_sym("...") {
                        rest = Some(self.pattern()?);
                        break;
                    }
                    ps.push(self.pattern()?);
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.expect_sym("]")?;
                match rest {
                    // `[a, b, ...rest]` is `a :: b :: rest`.
                    Some(r) => Ok(ps
                        .into_iter()
                        .rev()
                        .fold(r, |acc, p| Pattern::Cons(Box::new(p), Box::new(acc)))),
                    None => Ok(Pattern::List(ps)),
                }
            }
            Tok::Sym("{") => {
                self.advance();
                let mut fs = Vec::new();
                while !self.is_sym("}") {
                    if self.eat_sym("...") {
                        break;
                    }
                    let f = self.field_name()?;
                    let p = if self.eat_sym(":") {
                        self.pattern()?
                    } else {
                        Pattern::Var(Rc::clone(&f))
                    };
                    fs.push((f, p));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.expect_sym("}")?;
                Ok(Pattern::Record(fs))
            }
            _ => self.err("a pattern"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_precedence() {
        let e = parse_expr("1 + 2 * 3 == 7 || false").map_err(|d| d.render());
        let Ok(Expr {
            kind: ExprKind::Binary(BinOp::Or, l, _),
            ..
        }) = e
        else {
            panic!("{e:?}")
        };
        assert!(matches!(l.kind, ExprKind::Binary(BinOp::Eq, _, _)));
    }

    #[test]
    fn parses_cons_right_assoc() {
        let e = parse_expr("1 :: 2 :: []");
        let Ok(Expr {
            kind: ExprKind::Binary(BinOp::Cons, _, r),
            ..
        }) = e
        else {
            panic!("{e:?}")
        };
        assert!(matches!(r.kind, ExprKind::Binary(BinOp::Cons, _, _)));
    }

    #[test]
    fn parses_records_blocks_updates() {
        assert!(matches!(
            parse_expr("{a: 1, b: 2}").map(|e| e.kind),
            Ok(ExprKind::Record(_))
        ));
        assert!(matches!(
            parse_expr("{r | a: 1}").map(|e| e.kind),
            Ok(ExprKind::Update(_, _))
        ));
        assert!(matches!(
            parse_expr("{ let x = 1; x + 1 }").map(|e| e.kind),
            Ok(ExprKind::Block(_, _))
        ));
        assert!(matches!(
            parse_expr("{}").map(|e| e.kind),
            Ok(ExprKind::Record(_))
        ));
    }

    #[test]
    fn deep_nesting_is_an_error_not_an_overflow() {
        let ok = crate::on_big_stack(deep_nesting_checks);
        assert_eq!(ok, Some(()));
    }

    fn deep_nesting_checks() {
        let src = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(
            parse_expr(&src).map_err(|d| d.code).err().as_deref(),
            Some("PAR_DEPTH")
        );
        let src = format!("{}1", "- ".repeat(10_000));
        assert_eq!(
            parse_expr(&src).map_err(|d| d.code).err().as_deref(),
            Some("PAR_DEPTH")
        );
        let src = format!("1{}", " + 1".repeat(10_000));
        assert_eq!(
            parse_expr(&src).map_err(|d| d.code).err().as_deref(),
            Some("PAR_DEPTH")
        );
        let src = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(
            parse_expr(&src).map_err(|d| d.code).err().as_deref(),
            Some("PAR_DEPTH")
        );
    }

    #[test]
    fn parses_a_module() {
        let src = "module a/b\nimport std/json (decode, encode as enc)\nimport std/list as L\n\
                   type T = A(int) | B deriving (Eq)\ntype R = {x: int, y: [string]}\n\
                   export pure func f(x: int, y: int) -> int ! {} tests [((1, 2), 3)] = x + y\n\
                   func g(x: int) -> [int] { let y = x; [y, y] }";
        let m = parse_module(src).map_err(|d| d.render());
        let Ok(m) = m else { panic!("{m:?}") };
        assert_eq!(m.imports.len(), 2);
        assert_eq!(m.types.len(), 2);
        assert_eq!(m.funcs.len(), 2);
        assert!(m.funcs[0].tests.is_some());
        assert_eq!(m.types[0].deriving.len(), 1);
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn parsing_arbitrary_text_never_panics(src in r#"[a-z(){}\[\]"$\\.,:;=|<>+*/%!\-0-9 \n]{0,120}"#) {
            let _ = super::parse_module(&src);
            let _ = super::parse_expr(&src);
        }
    }
}
