//! [`Ty`] -> TypeScript text, stopping as soon as the character budget is exceeded.

use super::ir::{Keyword, Object, Tuple, Ty};

/// The text did not fit the budget.
#[derive(Debug)]
pub(crate) struct Overflow;

pub(crate) struct Rendered {
    pub(crate) text: String,
    /// Some properties were left out (greedy drop or an already dropped object).
    pub(crate) dropped: bool,
}

/// Renders `ty` in at most `max_chars` characters; `included[id]` says whether the top-level
/// optional property with that greedy id is shown.
pub(crate) fn render(ty: &Ty, max_chars: usize, included: &[bool]) -> Result<Rendered, Overflow> {
    let mut out = Out { text: String::new(), chars: 0, max_chars, included, dropped: false };
    out.ty(ty)?;
    Ok(Rendered { text: out.text, dropped: out.dropped })
}

struct Out<'a> {
    text: String,
    chars: usize,
    max_chars: usize,
    included: &'a [bool],
    dropped: bool,
}

impl Out<'_> {
    fn push(&mut self, s: &str) -> Result<(), Overflow> {
        self.chars += s.chars().count();
        if self.chars > self.max_chars {
            return Err(Overflow);
        }
        self.text.push_str(s);
        Ok(())
    }

    fn ty(&mut self, ty: &Ty) -> Result<(), Overflow> {
        match ty {
            Ty::Keyword(keyword) => self.push(keyword.as_str()),
            Ty::Literal { text, .. } => self.push(text),
            Ty::Array(item) => self.array(item),
            Ty::Tuple(tuple) => self.tuple(tuple),
            Ty::Object(object) => self.object(object),
            Ty::Union(members) => self.joined(members, " | ", false),
            Ty::Intersection(members) => self.joined(members, " & ", true),
        }
    }

    fn joined(&mut self, members: &[Ty], separator: &str, in_intersection: bool) -> Result<(), Overflow> {
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                self.push(separator)?;
            }
            let parens = in_intersection && matches!(member, Ty::Union(_));
            self.wrapped(member, parens)?;
        }
        Ok(())
    }

    fn wrapped(&mut self, ty: &Ty, parens: bool) -> Result<(), Overflow> {
        if parens {
            self.push("(")?;
            self.ty(ty)?;
            self.push(")")
        } else {
            self.ty(ty)
        }
    }

    /// `T[]` for simple item types, `Array<T>` for objects, unions, intersections and negative
    /// number literals (the form the spec's quick-index examples use).
    fn array(&mut self, item: &Ty) -> Result<(), Overflow> {
        let simple = match item {
            Ty::Keyword(_) | Ty::Array(_) | Ty::Tuple(_) => true,
            Ty::Literal { text, .. } => !text.starts_with('-'),
            Ty::Object(object) => renders_as_keyword(object, self.included),
            Ty::Union(_) | Ty::Intersection(_) => false,
        };
        if simple {
            self.ty(item)?;
            self.push("[]")
        } else {
            self.push("Array<")?;
            self.ty(item)?;
            self.push(">")
        }
    }

    fn tuple(&mut self, tuple: &Tuple) -> Result<(), Overflow> {
        self.push("[")?;
        for (i, element) in tuple.elements.iter().enumerate() {
            if i > 0 {
                self.push(", ")?;
            }
            let parens = element.optional && matches!(element.ty, Ty::Union(_) | Ty::Intersection(_));
            self.wrapped(&element.ty, parens)?;
            if element.optional {
                self.push("?")?;
            }
        }
        if let Some(rest) = &tuple.rest {
            if !tuple.elements.is_empty() {
                self.push(", ")?;
            }
            self.push("...")?;
            self.array(rest)?;
        }
        self.push("]")
    }

    fn object(&mut self, object: &Object) -> Result<(), Overflow> {
        let included = self.included;
        let shown =
            |p: &&super::ir::Prop| p.greedy_id.is_none_or(|id| included.get(id).copied().unwrap_or(false));
        let dropped = object.dropped || object.props.iter().any(|p| !shown(&p));
        self.dropped |= dropped;
        let mut props = object.props.iter().filter(shown).peekable();
        if props.peek().is_none() {
            return match &object.index {
                _ if dropped => self.push(Keyword::Object.as_str()),
                _ if object.explicit_open => self.push("Record<string, unknown>"),
                _ if object.open && !object.declared => self.push(Keyword::Object.as_str()),
                None => self.push("{}"),
                Some(index) => {
                    self.push("Record<string, ")?;
                    self.ty(index)?;
                    self.push(">")
                }
            };
        }
        self.push("{ ")?;
        for (i, prop) in props.enumerate() {
            if i > 0 {
                self.push("; ")?;
            }
            self.push(&super::property_key(&prop.key))?;
            self.push(if prop.optional { "?: " } else { ": " })?;
            self.ty(&prop.ty)?;
        }
        if dropped || object.explicit_open {
            self.push("; [key: string]: unknown")?;
        } else if let Some(index) = &object.index {
            self.push("; [key: string]: ")?;
            self.ty(index)?;
        }
        self.push(" }")
    }
}

/// Whether `object` renders as the bare keyword `object` (so `object[]` needs no `Array<>`).
fn renders_as_keyword(object: &Object, included: &[bool]) -> bool {
    let all_hidden = object
        .props
        .iter()
        .all(|p| p.greedy_id.is_some_and(|id| !included.get(id).copied().unwrap_or(false)));
    all_hidden
        && (object.dropped
            || !object.props.is_empty()
            || (object.open && !object.declared && !object.explicit_open))
}
