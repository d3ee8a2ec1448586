//! Expressions: operators by precedence, postfix calls and fields, primaries, records,
//! string interpolation and blocks (ailang.md §4.2).

use super::*;

impl Parser {
    // ---------------------------------------------------------------- expressions

    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.binary(0);
        self.leave();
        r
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let op = match self.peek() {
            Tok::Sym("||") => (BinOp::Or, 1),
            Tok::Sym("&&") => (BinOp::And, 2),
            Tok::Sym("==") => (BinOp::Eq, 3),
            Tok::Sym("!=") => (BinOp::Ne, 3),
            Tok::Sym("<") => (BinOp::Lt, 3),
            Tok::Sym("<=") => (BinOp::Le, 3),
            Tok::Sym(">") => (BinOp::Gt, 3),
            Tok::Sym(">=") => (BinOp::Ge, 3),
            Tok::Sym("::") => (BinOp::Cons, 4),
            Tok::Sym("++") => (BinOp::Concat, 5),
            Tok::Sym("+") => (BinOp::Add, 6),
            Tok::Sym("-") => (BinOp::Sub, 6),
            Tok::Sym("*") => (BinOp::Mul, 7),
            Tok::Sym("/") => (BinOp::Div, 7),
            Tok::Sym("%") => (BinOp::Rem, 7),
            _ => return None,
        };
        Some(op)
    }

    /// Precedence climbing; every folded operator counts toward the nesting bound.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        let mut folds = 0usize;
        let result = loop {
            let Some((op, prec)) = self.binop() else {
                break Ok(lhs);
            };
            if prec < min {
                break Ok(lhs);
            }
            self.advance();
            folds += 1;
            if let Err(e) = self.enter() {
                break Err(e);
            }
            // `::` is right-associative; the rest are left-associative.
            let next_min = if op == BinOp::Cons { prec } else { prec + 1 };
            let rhs = match self.binary(next_min) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            let span = lhs.span;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        };
        self.depth = self.depth.saturating_sub(folds);
        result
    }

    fn unary(&mut self) -> PResult<Expr> {
        let span = self.span();
        let op = if self.is_sym("-") {
            Some(UnOp::Neg)
        } else if self.is_sym("!") || self.is_kw("not") {
            Some(UnOp::Not)
        } else {
            None
        };
        match op {
            Some(op) => {
                self.advance();
                self.enter()?;
                let e = self.unary();
                self.leave();
                let e = e?;
                if let (UnOp::Neg, ExprKind::Int(i)) = (op, &e.kind) {
                    return Ok(Expr {
                        kind: ExprKind::Int(i.wrapping_neg()),
                        span,
                    });
                }
                if let (UnOp::Neg, ExprKind::Float(f)) = (op, &e.kind) {
                    return Ok(Expr {
                        kind: ExprKind::Float(-f),
                        span,
                    });
                }
                Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    span,
                })
            }
            None => self.postfix(),
        }
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        let mut folds = 0usize;
        let result = loop {
            let span = e.span;
            if self.is_sym("(") {
                self.advance();
                let args = match self.expr_list(")") {
                    Ok(a) => a,
                    Err(err) => break Err(err),
                };
                e = Expr {
                    kind: ExprKind::Call(Box::new(e), args),
                    span,
                };
            } else if self.is_sym(".") && matches!(self.peek_at(1), Tok::Ident(_)) {
                self.advance();
                let f = match self.advance() {
                    Tok::Ident(f) => f,
                    _ => break self.err("a field name"),
                };
                e = Expr {
                    kind: ExprKind::Field(Box::new(e), f),
                    span,
                };
            } else {
                break Ok(e);
            }
            folds += 1;
            if let Err(err) = self.enter() {
                break Err(err);
            }
        };
        self.depth = self.depth.saturating_sub(folds);
        result
    }

    pub(super) fn expr_list(&mut self, close: &str) -> PResult<Vec<Expr>> {
        let mut es = Vec::new();
        while !self.is_sym(close) {
            es.push(self.expr()?);
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym(close)?;
        Ok(es)
    }

    /// A string token's parts as an expression. The token was moved out of the stream, so
    /// normally this is its only holder and the parts are taken, not copied.
    fn string_expr(&mut self, parts: Rc<Vec<LexPart>>, span: Span) -> PResult<Expr> {
        let mut parts = Rc::try_unwrap(parts).unwrap_or_else(|shared| (*shared).clone());
        if let [LexPart::Lit(s)] = parts.as_mut_slice() {
            return Ok(Expr {
                kind: ExprKind::Str(std::mem::take(s)),
                span,
            });
        }
        let mut out = Vec::new();
        for part in parts {
            match part {
                LexPart::Lit(s) => out.push(StrPart::Lit(s)),
                LexPart::Expr(toks, pspan) => {
                    let mut sub = Parser {
                        toks,
                        pos: 0,
                        depth: self.depth,
                        skip_tests: self.skip_tests,
                    };
                    if matches!(sub.peek(), Tok::Eof) {
                        return Err(Diag::error("PAR001", "empty ${} in a string", Some(pspan)));
                    }
                    let e = sub.expr()?;
                    sub.expect_eof()?;
                    out.push(StrPart::Expr(e));
                }
            }
        }
        Ok(Expr {
            kind: ExprKind::Interp(out),
            span,
        })
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        let mk = |kind| Ok(Expr { kind, span });
        match self.peek().clone() {
            Tok::Int(i) => {
                self.advance();
                mk(ExprKind::Int(i))
            }
            Tok::Float(f) => {
                self.advance();
                mk(ExprKind::Float(f))
            }
            Tok::Str(parts) => {
                self.advance();
                self.string_expr(parts, span)
            }
            Tok::Ident(k) => match &*k {
                "true" | "false" => {
                    self.advance();
                    mk(ExprKind::Bool(&*k == "true"))
                }
                "if" => {
                    self.advance();
                    let c = self.expr()?;
                    self.expect_kw("then")?;
                    let a = self.expr()?;
                    self.expect_kw("else")?;
                    let b = self.expr()?;
                    mk(ExprKind::If(Box::new(c), Box::new(a), Box::new(b)))
                }
                "match" => {
                    self.advance();
                    let scrut = self.expr()?;
                    self.expect_sym("{")?;
                    let mut arms = Vec::new();
                    while !self.is_sym("}") {
                        let aspan = self.span();
                        let pat = self.pattern()?;
                        let guard = if self.eat_kw("if") {
                            Some(self.expr()?)
                        } else {
                            None
                        };
                        self.expect_sym("=>")?;
                        let body = self.expr()?;
                        arms.push(Arm {
                            pat,
                            guard,
                            body,
                            span: aspan,
                        });
                        if !self.eat_sym(",") {
                            break;
                        }
                    }
                    self.expect_sym("}")?;
                    mk(ExprKind::Match(Box::new(scrut), arms))
                }
                "let" => {
                    self.advance();
                    let pat = self.pattern()?;
                    let ty = if self.eat_sym(":") {
                        Some(self.ty()?)
                    } else {
                        None
                    };
                    self.expect_sym("=")?;
                    let v = self.expr()?;
                    self.expect_kw("in")?;
                    let body = self.expr()?;
                    mk(ExprKind::LetIn(pat, ty, Box::new(v), Box::new(body)))
                }
                "letrec" => {
                    self.advance();
                    let name = self.ident("a function name")?;
                    self.expect_sym("=")?;
                    let v = self.expr()?;
                    self.expect_kw("in")?;
                    let body = self.expr()?;
                    mk(ExprKind::LetRecIn(name, Box::new(v), Box::new(body)))
                }
                _ => {
                    let name = self.ident("an expression")?;
                    mk(ExprKind::Var(name))
                }
            },
            Tok::Sym("\\") => {
                self.advance();
                let mut params = Vec::new();
                while !self.is_sym(".") {
                    match self.peek().clone() {
                        Tok::Ident(s) if &*s == "_" => {
                            self.advance();
                            params.push(Rc::from("_"));
                        }
                        _ => params.push(self.ident("a lambda parameter")?),
                    }
                }
                if params.is_empty() {
                    return self.err("a lambda parameter");
                }
                self.expect_sym(".")?;
                let body = self.expr()?;
                mk(ExprKind::Lambda(params, Rc::new(body)))
            }
            Tok::Sym("(") => {
                self.advance();
                let mut es = self.expr_list(")")?;
                match es.len() {
                    0 => mk(ExprKind::Unit),
                    1 => Ok(es.remove(0)),
                    _ => mk(ExprKind::Tuple(es)),
                }
            }
            Tok::Sym("[") => {
                self.advance();
                let es = self.expr_list("]")?;
                mk(ExprKind::List(es))
            }
            Tok::Sym("{") => {
                self.advance();
                self.brace(span)
            }
            _ => self.err("an expression"),
        }
    }

    /// After `{`: a record literal, a record update or a block.
    fn brace(&mut self, span: Span) -> PResult<Expr> {
        if self.eat_sym("}") {
            return Ok(Expr {
                kind: ExprKind::Record(Vec::new()),
                span,
            });
        }
        if matches!(self.peek(), Tok::Ident(_)) && matches!(self.peek_at(1), Tok::Sym(":")) {
            let fields = self.record_fields()?;
            return Ok(Expr {
                kind: ExprKind::Record(fields),
                span,
            });
        }
        if !self.is_kw("let") && !self.is_kw("letrec") {
            let first = self.expr()?;
            if self.eat_sym("|") {
                let fields = self.record_fields()?;
                return Ok(Expr {
                    kind: ExprKind::Update(Box::new(first), fields),
                    span,
                });
            }
            return self.block_from(span, Some(first));
        }
        self.block_from(span, None)
    }

    fn record_fields(&mut self) -> PResult<Vec<(Name, Expr)>> {
        let mut fields = Vec::new();
        while !self.is_sym("}") {
            let f = self.field_name()?;
            self.expect_sym(":")?;
            let e = self.expr()?;
            fields.push((f, e));
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym("}")?;
        Ok(fields)
    }

    pub(super) fn block_rest(&mut self, span: Span) -> PResult<Expr> {
        if self.eat_sym("}") {
            return Ok(Expr {
                kind: ExprKind::Unit,
                span,
            });
        }
        self.block_from(span, None)
    }

    /// Statements up to the closing `}`; `first` is an already parsed leading expression.
    fn block_from(&mut self, span: Span, first: Option<Expr>) -> PResult<Expr> {
        let mut stmts = Vec::new();
        let mut pending = first;
        loop {
            let e = match pending.take() {
                Some(e) => e,
                None => {
                    if self.is_kw("let") || self.is_kw("letrec") {
                        let rec = self.is_kw("letrec");
                        let lspan = self.span();
                        self.advance();
                        let (pat, name) = if rec {
                            let n = self.ident("a function name")?;
                            (Pattern::Var(Rc::clone(&n)), Some(n))
                        } else {
                            (self.pattern()?, None)
                        };
                        let ty = if self.eat_sym(":") {
                            Some(self.ty()?)
                        } else {
                            None
                        };
                        self.expect_sym("=")?;
                        let v = self.expr()?;
                        if self.eat_kw("in") {
                            let body = self.expr()?;
                            let kind = match name {
                                Some(n) => ExprKind::LetRecIn(n, Box::new(v), Box::new(body)),
                                None => ExprKind::LetIn(pat, ty, Box::new(v), Box::new(body)),
                            };
                            Expr { kind, span: lspan }
                        } else {
                            // `;` separates statements; a newline-separated `let` is accepted too.
                            self.eat_sym(";");
                            stmts.push(match name {
                                Some(n) => Stmt::LetRec(n, v),
                                None => Stmt::Let(pat, ty, v),
                            });
                            if self.eat_sym("}") {
                                return Ok(Expr {
                                    kind: ExprKind::Block(
                                        stmts,
                                        Box::new(Expr {
                                            kind: ExprKind::Unit,
                                            span,
                                        }),
                                    ),
                                    span,
                                });
                            }
                            continue;
                        }
                    } else {
                        self.expr()?
                    }
                }
            };
            if self.eat_sym(";") {
                stmts.push(Stmt::Expr(e));
                if self.eat_sym("}") {
                    let unit = Expr {
                        kind: ExprKind::Unit,
                        span,
                    };
                    return Ok(Expr {
                        kind: ExprKind::Block(stmts, Box::new(unit)),
                        span,
                    });
                }
                continue;
            }
            if !self.is_sym("}") && !matches!(self.peek(), Tok::Eof) {
                // A statement followed by another one on the next line, without `;`.
                stmts.push(Stmt::Expr(e));
                continue;
            }
            self.expect_sym("}")?;
            if stmts.is_empty() {
                return Ok(e);
            }
            return Ok(Expr {
                kind: ExprKind::Block(stmts, Box::new(e)),
                span,
            });
        }
    }
}
